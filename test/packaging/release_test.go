//go:build packaging

package packaging_test

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The release, as `go tool task release` makes it: a static binary per
// architecture, SHA256SUMS that sha256sum -c accepts, and an SBOM; the
// amd64 binary runs and names its version and commit.
func TestRelease(t *testing.T) {
	r := fullRelease(t)
	sbom := filepath.Join(r.dir, "latchkey_"+r.version+".cdx.json")
	sums := filepath.Join(r.dir, "SHA256SUMS")
	require.Equal(t, []string{r.binary("amd64"), r.binary("arm64"), sbom, sums}, r.files, "release.sh prints what it built")

	requireStatic(t, r.binary("amd64"), elf.EM_X86_64)
	requireStatic(t, r.binary("arm64"), elf.EM_AARCH64)

	// The version is git describe's, -dirty for a checkout with changes
	// (whether it has some is release.sh's to say: the suites running
	// beside this one leave nothing in the checkout, but may meanwhile).
	described, err := gitOutput("describe", "--tags", "--always")
	require.NoError(t, err)
	require.Contains(t, []string{described, described + "-dirty"}, r.version)

	// `latchkey version`: the version in the file name, the commit (dirty
	// when the checkout is), its time, and the Go that built it.
	head, err := gitOutput("rev-parse", "HEAD")
	require.NoError(t, err)
	committed, err := gitOutput("show", "-s", "--format=%cI", "HEAD")
	require.NoError(t, err)
	out, err := exec.Command(r.binary("amd64"), "version").CombinedOutput()
	require.NoError(t, err, string(out))
	want := regexp.MustCompile(`^latchkey ` + regexp.QuoteMeta(r.version) + ` \(commit ` + head + `(\+dirty)?, built (\S+), go1\.\S+, linux/amd64\)\n$`)
	m := want.FindStringSubmatch(string(out))
	require.NotNil(t, m, "latchkey version: %q", out)
	require.Equal(t, strings.HasSuffix(r.version, "-dirty"), m[1] != "", "dirty in the version and the commit alike")
	requireSameInstant(t, committed, m[2])
	// --version and the metric's labels come from the same place (tested
	// in the root package); check-config prints the line first.
	out, err = exec.Command(r.binary("amd64"), "--version").CombinedOutput()
	require.NoError(t, err)
	require.Equal(t, m[0], string(out))

	// The checksums, as a user checks them, and as computed here.
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = r.dir
	out, err = check.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, 3, strings.Count(string(out), ": OK\n"), string(out))
	lines := strings.Split(strings.TrimSpace(string(must(os.ReadFile(sums)))), "\n")
	require.Len(t, lines, 3)
	for i, f := range r.files[:3] {
		sum := sha256.Sum256(must(os.ReadFile(f)))
		require.Equal(t, hex.EncodeToString(sum[:])+"  "+filepath.Base(f), lines[i])
	}

	requireSBOM(t, sbom, r)
}

// Two builds of one commit are byte-identical, the second from an empty
// build cache (every package and SQLite's C code compiled again), so that
// the bytes come from the source and the flags, not from a cache.
func TestReleaseIsReproducible(t *testing.T) {
	first := fullRelease(t)
	second, err := rebuilt()
	require.NoError(t, err)
	require.Equal(t, first.version, second.version)
	require.Equal(t, []string{second.binary("amd64"), filepath.Join(second.dir, "SHA256SUMS")}, second.files)
	a, b := must(os.ReadFile(first.binary("amd64"))), must(os.ReadFile(second.binary("amd64")))
	require.True(t, bytes.Equal(a, b), "the amd64 binaries differ (%d and %d bytes)", len(a), len(b))
}

// requireStatic: an ELF executable for machine with no interpreter and no
// shared library to load, so it runs on any Linux of its architecture, in
// an image FROM scratch too.
func requireStatic(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, machine, f.Machine, path)
	require.Equal(t, elf.ELFCLASS64, f.Class, path)
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "%s asks for a dynamic loader", path)
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs, "%s needs shared libraries", path)
	require.Nil(t, f.Section(".interp"), path)
	info, err := buildinfo.ReadFile(path)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	require.Equal(t, "1", settings["CGO_ENABLED"], "SQLite is cgo")
	require.Equal(t, "true", settings["-trimpath"])
	require.Equal(t, "osusergo,netgo,sqlite_omit_load_extension", settings["-tags"])
}

// requireSBOM: CycloneDX JSON whose main component is latchkey at the
// release's version, listing every module the amd64 binary links (as Go's
// own build information in it says) and the standard library.
func requireSBOM(t *testing.T, path string, r release) {
	t.Helper()
	var bom struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Metadata    struct {
			Component struct {
				Type, Name, Version string
			}
		}
		Components []struct {
			Type, Name, Version, Purl string
		}
	}
	dec := json.NewDecoder(bytes.NewReader(must(os.ReadFile(path))))
	require.NoError(t, dec.Decode(&bom))
	require.Equal(t, "CycloneDX", bom.BOMFormat)
	require.Regexp(t, `^1\.[4-9]$`, bom.SpecVersion)
	require.Equal(t, "application", bom.Metadata.Component.Type)
	require.Equal(t, "github.com/latchkey-auth/latchkey", bom.Metadata.Component.Name)
	require.Equal(t, r.version, bom.Metadata.Component.Version)

	listed := map[string]string{}
	for _, c := range bom.Components {
		listed[c.Name] = c.Version
		require.True(t, strings.HasPrefix(c.Purl, "pkg:golang/"+c.Name+"@"+c.Version+"?"), "%s: purl %s", c.Name, c.Purl)
	}
	info, err := buildinfo.ReadFile(r.binary("amd64"))
	require.NoError(t, err)
	require.NotEmpty(t, info.Deps)
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		require.Equal(t, d.Version, listed[d.Path], "the SBOM lists %s", d.Path)
	}
	require.Len(t, bom.Components, len(info.Deps)+1, "the modules and the standard library, nothing else")
	require.Equal(t, info.GoVersion, listed["std"])
	for _, name := range []string{"github.com/labstack/echo/v4", "gorm.io/gorm", "github.com/mattn/go-sqlite3", "gorm.io/driver/postgres"} {
		require.NotEmpty(t, listed[name], name)
	}
}

// requireSameInstant: two RFC 3339 times (git's with an offset, the
// binary's in UTC) name the same second.
func requireSameInstant(t *testing.T, want, got string) {
	t.Helper()
	w, err := parseTime(want)
	require.NoError(t, err)
	g, err := parseTime(got)
	require.NoError(t, err, "built %q", got)
	require.True(t, w.Equal(g), "built %s, the commit's time is %s", got, want)
	require.True(t, strings.HasSuffix(got, "Z"), "in UTC: %s", got)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
