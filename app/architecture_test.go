package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The house's walls (docs/architecture.md, issue 27), held by reading the
// source: a feature handler is a package below app/ that speaks HTTP
// (imports Echo); app itself is the wiring, and app/web the kit every
// handler shares.

const module = "github.com/latchkey-auth/latchkey"

// Budgets of the root type, which only wires: New builds the shared parts
// (wiring, alive while New runs) and mounts the feature handlers; what is
// left is what Serve and Close need. A new feature is a handler package of
// its own, never a field or a method here.
const (
	appFieldBudget  = 12
	appMethodBudget = 12
)

type goPackage struct {
	dir     string // relative to the module root, e.g. "app/ops"
	files   map[string]*ast.File
	imports map[string]bool // import paths of its non-test files
}

func readPackage(t *testing.T, fset *token.FileSet, dir string) goPackage {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", dir))
	require.NoError(t, err)
	p := goPackage{dir: dir, files: map[string]*ast.File{}, imports: map[string]bool{}}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("..", dir, name), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		p.files[name] = f
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			p.imports[path] = true
		}
	}
	return p
}

// appPackages are app and every package below it that has Go files.
func appPackages(t *testing.T, fset *token.FileSet) map[string]goPackage {
	t.Helper()
	out := map[string]goPackage{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if rel != "app" && !strings.HasPrefix(rel, "app/") && rel != "." {
			return filepath.SkipDir
		}
		if rel == "." {
			return nil
		}
		p := readPackage(t, fset, rel)
		if len(p.files) > 0 {
			out[rel] = p
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// isHandler reports whether a package below app speaks HTTP as a feature
// handler: it imports Echo and is neither the wiring nor the kit.
func isHandler(p goPackage) bool {
	return p.dir != "app" && p.dir != "app/web" && p.imports["github.com/labstack/echo/v4"]
}

// storageNames are, by import path, the names of package models and of
// each package below it (its feature packages, models/<feature>store, and
// the schema) that a handler may not use: every function (queries,
// Connect, New) and the Store; their types (User, Account, SecondStep,
// ...) and errors stay usable as values.
func storageNames(t *testing.T, fset *token.FileSet) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(filepath.Join("..", "models"), func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		p := readPackage(t, fset, filepath.ToSlash(rel))
		if len(p.files) == 0 {
			return nil
		}
		names := map[string]bool{"Store": true}
		for _, f := range p.files {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
					names[fn.Name.Name] = true
				}
			}
		}
		out[module+"/"+p.dir] = names
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, out, module+"/models")
	return out
}

func TestArchitectureHandlersStayInTheirRooms(t *testing.T) {
	fset := token.NewFileSet()
	pkgs := appPackages(t, fset)
	storage := storageNames(t, fset)
	var handlers []string
	for dir, p := range pkgs {
		if !isHandler(p) {
			continue
		}
		handlers = append(handlers, dir)
		for path := range p.imports {
			other, ok := strings.CutPrefix(path, module+"/")
			if ok && other != dir && isHandler(pkgs[other]) {
				t.Errorf("handler package %s imports handler package %s: handlers meet only in app's wiring", dir, other)
			}
		}
		for name, f := range p.files {
			// The names the storage packages are imported under in f.
			locals := map[string]string{} // local name → import path
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if storage[path] == nil {
					continue
				}
				local := path[strings.LastIndex(path, "/")+1:]
				if im.Name != nil {
					local = im.Name.Name
				}
				locals[local] = path
			}
			if len(locals) == 0 {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && storage[locals[id.Name]][sel.Sel.Name] {
					t.Errorf("%s/%s:%d uses %s.%s: a handler reaches storage only through the core's interfaces",
						dir, name, fset.Position(sel.Pos()).Line, strings.TrimPrefix(locals[id.Name], module+"/"), sel.Sel.Name)
				}
				return true
			})
		}
	}
	sort.Strings(handlers)
	require.Subset(t, handlers, []string{"app/accountcentre", "app/accountpages", "app/emailflow", "app/forwardauth", "app/nextauth", "app/oauthflow", "app/ops", "app/passkeyflow", "app/twofactorpages"}, "the feature handlers found: %v", handlers)
}

func TestArchitectureKitKnowsNoFeature(t *testing.T) {
	fset := token.NewFileSet()
	pkgs := appPackages(t, fset)
	for path := range pkgs["app/web"].imports {
		if other, ok := strings.CutPrefix(path, module+"/"); ok && (other == "app" || isHandler(pkgs[other]) || other == "models" || strings.HasPrefix(other, "models/")) {
			t.Errorf("app/web imports %s: the kit is below every handler", other)
		}
	}
}

func TestArchitectureRootTypeBudget(t *testing.T) {
	fset := token.NewFileSet()
	app := appPackages(t, fset)["app"]
	fields, methods := 0, 0
	for _, f := range app.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "App" {
						for _, fl := range ts.Type.(*ast.StructType).Fields.List {
							fields += max(1, len(fl.Names))
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					if st, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
						if id, ok := st.X.(*ast.Ident); ok && id.Name == "App" {
							methods++
						}
					}
				}
			}
		}
	}
	require.LessOrEqual(t, fields, appFieldBudget, "App has %d fields: a new feature is a handler package of its own, not a field of the root type", fields)
	require.LessOrEqual(t, methods, appMethodBudget, "App has %d methods: a new feature is a handler package of its own, not methods on the root type", methods)
	t.Logf("App: %d fields (budget %d), %d methods (budget %d)", fields, appFieldBudget, methods, appMethodBudget)
}
