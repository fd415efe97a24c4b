//go:build packaging

// Package packaging_test builds latchkey's release artefacts and proves each
// one works by installing and running it on this machine.
package packaging_test

// The Debian package (packaging/deb): built with nfpm from a static binary,
// installed with dpkg on THIS machine (the test runs as root and changes
// the machine: it purges the package at the end, and refuses to start when
// a latchkey package it did not make is installed, or latchkey's folders
// exist without one). This machine runs no systemd, so the unit is checked
// with systemd-analyze (verify, and the security score) and the service is
// started exactly as the unit's ExecStart would be: as its User and Group,
// in its WorkingDirectory, with its EnvironmentFile, UMask, no new
// privileges and no capabilities. What only systemd does (the namespaces,
// the system call filter, StateDirectory=, Restart=) is not run here.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/test/testport"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

const (
	// debTestMark is in the version of every package this test makes, so
	// that it knows its own leftovers from a real installation.
	debTestMark     = "~pkgtest"
	debVersionA     = "0.31.1" + debTestMark
	debVersionB     = "0.31.2" + debTestMark
	debUnitPath     = "/usr/lib/systemd/system/latchkey.service"
	debConfigPath   = "/etc/latchkey/config.yaml"
	debEnvPath      = "/etc/latchkey/latchkey.env"
	debStateDir     = "/var/lib/latchkey"
	debPatience     = 60 * time.Second
	debMaxExposure  = 2.0 // systemd-analyze security: 1.4 when written
	debBasePath     = "/api/auth"
	debSignInEmail  = "deb-operator@example.com"
	debSessionCheck = "/session"
)

// debRepoRoot is the repository's root (go test runs in test/packaging).
func debRepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository's root")
	return root
}

// debBinaryCommand is the command that builds the static release binary
// of version into dir (packaging/release.sh, amd64 only), and the
// binary's path.
func debBinaryCommand(ctx context.Context, root, dir, version string) (*exec.Cmd, string) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "packaging", "release.sh"),
		"--out", dir, "--arch", "amd64", "--no-sbom", "--version", version)
	cmd.Dir = root
	return cmd, filepath.Join(dir, "latchkey_"+version+"_linux_amd64")
}

// debBuild builds the binary and the package of version into dir/version,
// returning the package's path; configSource, when not "", is the
// config.yaml the package's /etc/latchkey/config.yaml is made from. It
// runs on any goroutine: failures are returned.
func debBuild(ctx context.Context, root, dir, version, configSource string) (string, error) {
	binary, err := debBinary(ctx, root, dir, version)
	if err != nil {
		return "", err
	}
	return debPackage(ctx, root, binary, dir, version, configSource)
}

// debBinary builds the binary of version into dir/version.
func debBinary(ctx context.Context, root, dir, version string) (string, error) {
	outDir := filepath.Join(dir, version)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	build, binary := debBinaryCommand(ctx, root, outDir, version)
	_, err := debOutput(build)
	return binary, err
}

// debPackage packages binary as version into dir/version with
// packaging/deb/build.sh.
func debPackage(ctx context.Context, root, binary, dir, version, configSource string) (string, error) {
	outDir := filepath.Join(dir, version)
	pkg := exec.CommandContext(ctx, "packaging/deb/build.sh", binary, version, "amd64", outDir)
	pkg.Dir = root
	if configSource != "" {
		pkg.Env = append(os.Environ(), "LATCHKEY_DEB_CONFIG_SOURCE="+configSource)
	}
	out, err := debOutput(pkg)
	if err != nil {
		return "", err
	}
	deb := strings.TrimSpace(out)
	if want := filepath.Join(outDir, "latchkey_"+version+"_amd64.deb"); deb != want {
		return "", fmt.Errorf("packaging/deb/build.sh printed %q, want %q", deb, want)
	}
	return deb, nil
}

// debOutput runs cmd and returns its standard output; its error carries
// everything cmd printed.
func debOutput(cmd *exec.Cmd) (string, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// debCommand runs name with args and returns everything it printed.
func debCommand(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// dpkg runs dpkg as an unattended upgrade would: no terminal, no
// questions, a changed conffile kept (--force-confold) and an unchanged
// one replaced (--force-confdef).
func dpkg(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("dpkg", append([]string{"--force-confdef", "--force-confold"}, args...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "dpkg %s:\n%s", strings.Join(args, " "), out)
	t.Logf("dpkg %s:\n%s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	return string(out)
}

// debInstalled is latchkey's dpkg state ("" when dpkg knows no such
// package: never installed, or purged) and version.
func debInstalled() (status, version string) {
	out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Status} ${Version}", "latchkey").Output()
	if err != nil {
		return "", ""
	}
	status, version, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	if status == "not-installed" {
		return "", ""
	}
	return status, version
}

// debMachineReady refuses a machine where a latchkey package this test did
// not make is installed, or latchkey's files or user exist without a
// package (purge would delete someone's data); it purges the test's own
// leftovers.
func debMachineReady(t *testing.T) {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "the Debian package test installs a package with dpkg: run it as root")
	_, err := exec.LookPath("dpkg")
	require.NoError(t, err, "the Debian package test needs dpkg (a Debian machine)")
	status, version := debInstalled()
	if status != "" {
		require.Contains(t, version, debTestMark,
			"a latchkey package this test did not make is installed (%s, %s): the test would replace and purge it; remove it first", version, status)
		t.Logf("purging the test's own leftover package %s (%s)", version, status)
		dpkg(t, "--purge", "latchkey")
	}
	for _, p := range []string{"/etc/latchkey", debStateDir, "/usr/bin/latchkey", debUnitPath} {
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "%s exists though no latchkey package is installed: the test would purge it; move it away first", p)
	}
	_, err = user.Lookup("latchkey")
	require.Error(t, err, "a latchkey user exists though no latchkey package is installed: the test would delete it at purge")
}

// debMode asserts a file's permissions and owner.
func debMode(t *testing.T, path string, mode os.FileMode, owner, group string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, mode, fi.Mode().Perm(), "%s's mode", path)
	st := fi.Sys().(*syscall.Stat_t)
	u, err := user.LookupId(strconv.Itoa(int(st.Uid)))
	require.NoError(t, err, "%s's owner", path)
	g, err := user.LookupGroupId(strconv.Itoa(int(st.Gid)))
	require.NoError(t, err, "%s's group", path)
	require.Equal(t, owner+":"+group, u.Username+":"+g.Name, "%s's owner", path)
}

// debGone asserts that path does not exist.
func debGone(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "%s should be gone", path)
}

// debRead is a file's content.
func debRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// debEdit rewrites a file in place (its mode and owner kept), as an
// operator's editor would.
func debEdit(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(edit(debRead(t, path))), fi.Mode().Perm()))
}

// debUnit is the [Service] section of a unit file: every key's values in
// order (a key may repeat; an empty assignment resets, as in systemd).
func debUnit(t *testing.T, path string) map[string][]string {
	t.Helper()
	service := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(debRead(t, path)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "%s: %q", path, line)
			require.False(t, strings.HasSuffix(v, `\`), "%s: continued lines are not read here: %q", path, line)
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if v == "" {
				service[k] = []string{""}
			} else {
				service[k] = append(service[k], v)
			}
		}
	}
	require.NoError(t, sc.Err())
	return service
}

// debOne is the single value of a unit key.
func debOne(t *testing.T, unit map[string][]string, key string) string {
	t.Helper()
	require.Len(t, unit[key], 1, "the unit's %s", key)
	return unit[key][0]
}

// debEnvFile reads an EnvironmentFile as systemd does for the plain
// KEY=value lines the package documents: comments (# and ;) and blank
// lines skipped, surrounding quotes removed.
func debEnvFile(t *testing.T, path string) []string {
	t.Helper()
	var env []string
	sc := bufio.NewScanner(strings.NewReader(debRead(t, path)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not KEY=value", path, line)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env = append(env, strings.TrimSpace(k)+"="+v)
	}
	require.NoError(t, sc.Err())
	return env
}

// debService is latchkey running as the installed unit would run it.
type debService struct {
	cmd  *exec.Cmd
	logs *debLog
	done chan struct{}
}

// debStart starts the installed unit's ExecStart without systemd: as its
// User and Group (setpriv, with their supplementary groups), with no new
// privileges and no capabilities, in its WorkingDirectory, with its UMask
// and the environment systemd gives a service (PATH, and HOME, USER,
// LOGNAME, SHELL of User=) plus its EnvironmentFile.
func debStart(t *testing.T) *debService {
	t.Helper()
	unit := debUnit(t, debUnitPath)
	execStart := strings.Fields(debOne(t, unit, "ExecStart"))
	require.NotContains(t, debOne(t, unit, "ExecStart"), `"`, "ExecStart is split on spaces here")
	userName, group := debOne(t, unit, "User"), debOne(t, unit, "Group")
	u, err := user.Lookup(userName)
	require.NoError(t, err)
	umask := debOne(t, unit, "UMask")
	require.Equal(t, "0077", umask)
	require.Equal(t, "true", debOne(t, unit, "NoNewPrivileges"))
	require.Equal(t, "", debOne(t, unit, "CapabilityBoundingSet"), "no capabilities")
	require.Equal(t, "", debOne(t, unit, "AmbientCapabilities"), "no capabilities")
	// StateDirectory=latchkey is /var/lib/latchkey, which systemd would
	// create and give to User=; the postinst made it.
	require.Equal(t, filepath.Join("/var/lib", debOne(t, unit, "StateDirectory")), debStateDir)
	debMode(t, debStateDir, 0o700, userName, group)

	args := append([]string{"-c", `umask "$0" && exec "$@"`, umask,
		"setpriv", "--reuid=" + userName, "--regid=" + group, "--init-groups",
		"--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"}, execStart...)
	svc := &debService{cmd: exec.Command("/bin/sh", args...), logs: &debLog{}, done: make(chan struct{})}
	svc.cmd.Dir = debOne(t, unit, "WorkingDirectory")
	svc.cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + u.HomeDir, "USER=" + userName, "LOGNAME=" + userName, "SHELL=/usr/sbin/nologin",
	}, debEnvFile(t, debOne(t, unit, "EnvironmentFile"))...)
	svc.cmd.Stdout, svc.cmd.Stderr = svc.logs, svc.logs
	require.NoError(t, svc.cmd.Start())
	go func() { _ = svc.cmd.Wait(); close(svc.done) }()
	t.Cleanup(func() {
		svc.stop(t)
		if t.Failed() || os.Getenv("LATCHKEY_PACKAGING_LOGS") != "" {
			t.Logf("--- latchkey's log (exit %d):\n%s", svc.cmd.ProcessState.ExitCode(), svc.logs)
		}
	})
	return svc
}

// waitReady waits for GET /health/ready at origin to answer 200.
func (s *debService) waitReady(t *testing.T, origin string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(debPatience)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			t.Fatalf("latchkey exited with %d before it was ready; log:\n%s", s.cmd.ProcessState.ExitCode(), s.logs)
		default:
		}
		if res, err := client.Get(origin + "/health/ready"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("latchkey was not ready within %s; log:\n%s", debPatience, s.logs)
}

// stop sends SIGTERM, as systemctl stop does, and waits; latchkey must
// exit 0 and have logged no panic.
func (s *debService) stop(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second): // the unit's TimeoutStopSec
			_ = s.cmd.Process.Kill()
			<-s.done
			t.Errorf("latchkey ignored SIGTERM for 30s")
		}
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("latchkey exited with %d; log:\n%s", code, s.logs)
	}
	if strings.Contains(s.logs.String(), "panic") {
		t.Errorf("latchkey panicked; log:\n%s", s.logs)
	}
}

// debLog collects a process's output; os/exec writes from its own goroutines.
type debLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *debLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *debLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// debBrowser is one user agent with a cookie jar that follows no redirect.
type debBrowser struct {
	t      *testing.T
	client *http.Client
	base   string // SERVICE_URL
}

func newDebBrowser(t *testing.T, base string) *debBrowser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	return &debBrowser{t: t, base: base, client: &http.Client{
		Jar: jar, Transport: transport, Timeout: debPatience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a request and reads the answer whole.
func (b *debBrowser) do(method, target string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.client.Do(req)
	require.NoError(b.t, err, "%s %s", method, target)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(b.t, err)
	// Transport errors aside, the connection is closed with the answer, so
	// that stopping latchkey waits for no idle keep-alive connection.
	b.client.CloseIdleConnections()
	return res, string(data)
}

// email is the signed-in user's address from GET /session, "" when signed out.
func (b *debBrowser) email() string {
	b.t.Helper()
	res, body := b.do(http.MethodGet, b.base+debSessionCheck, nil)
	require.Equal(b.t, http.StatusOK, res.StatusCode, body)
	var s struct {
		User struct{ Email string }
	}
	require.NoError(b.t, json.Unmarshal([]byte(body), &s), body)
	return s.User.Email
}

var debLinkRE = regexp.MustCompile(`https?://\S+/callback/email\?\S+`)

// signInByEmail is the e-mail sign-in a person does: the CSRF token, the
// form, the link in the e-mail the SMTP catcher received, opened in the
// same browser.
func (b *debBrowser) signInByEmail(smtp *smtptest.Server, addr, callbackURL string) {
	b.t.Helper()
	res, body := b.do(http.MethodGet, b.base+"/csrf", nil)
	require.Equal(b.t, http.StatusOK, res.StatusCode, body)
	var c struct{ CsrfToken string }
	require.NoError(b.t, json.Unmarshal([]byte(body), &c), body)
	require.NotEmpty(b.t, c.CsrfToken)

	res, body = b.do(http.MethodPost, b.base+"/signin/email", url.Values{"csrfToken": {c.CsrfToken}, "email": {addr}, "callbackUrl": {callbackURL}})
	require.Equal(b.t, http.StatusFound, res.StatusCode, body)
	require.Equal(b.t, b.base+"/verify-request?provider=email&type=email", res.Header.Get("Location"))

	mails := smtp.Wait(b.t, 1)
	require.Equal(b.t, []string{addr}, mails[len(mails)-1].To)
	p, err := smtptest.Parse(mails[len(mails)-1].Data)
	require.NoError(b.t, err)
	link := debLinkRE.FindString(p.Text)
	require.True(b.t, strings.HasPrefix(link, b.base+"/callback/email?"), "the link names SERVICE_URL: %q", link)

	res, body = b.do(http.MethodGet, link, nil)
	require.Equal(b.t, http.StatusFound, res.StatusCode, body)
	require.Equal(b.t, callbackURL, res.Header.Get("Location"))
}

// debFreePort is a TCP port free on loopback just now.
func debFreePort(t *testing.T) int {
	t.Helper()
	return testport.MustFree(t)
}

// debSecret is a random secret, as `openssl rand -hex 32` makes.
func debSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// debAdminScript runs a latchkey command (check-config, users list...) as
// the service would: as the latchkey user, with the environment file. It is
// docs/install.md's lk shell function, word for word.
const debAdminScript = `set -a && . /etc/latchkey/latchkey.env && set +a && ` +
	`exec setpriv --reuid=latchkey --regid=latchkey --init-groups latchkey --config /etc/latchkey/config.yaml "$@"`

// debAdmin runs `lk args...` from / and returns what it printed.
func debAdmin(args ...string) (string, error) {
	cmd := exec.Command("sh", append([]string{"-c", debAdminScript, "latchkey"}, args...)...)
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var debExposureRE = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+) (\S+)`)

// debCheckUnit verifies the installed unit with systemd-analyze, which
// reads unit files without a running systemd, and reports its exposure.
func debCheckUnit(t *testing.T) {
	t.Helper()
	// verify prints its findings (unknown keys, a missing binary or
	// EnvironmentFile...) and may still exit 0: any output fails.
	out := debCommand(t, "systemd-analyze", "verify", debUnitPath)
	require.Empty(t, strings.TrimSpace(out), "systemd-analyze verify %s", debUnitPath)

	cmd := exec.Command("systemd-analyze", "security", "--offline=true", "--no-pager", debUnitPath)
	report, err := cmd.CombinedOutput()
	// security exits non-zero only above --threshold (100 by default).
	require.NoError(t, err, "%s", report)
	m := debExposureRE.FindStringSubmatch(string(report))
	require.NotNil(t, m, "no exposure level in:\n%s", report)
	score, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	t.Logf("systemd-analyze security --offline=true %s: exposure %s %s (0 best, 10 worst); what it still counts:\n%s",
		debUnitPath, m[1], m[2], debUnticked(string(report)))
	require.LessOrEqual(t, score, debMaxExposure, "the unit's exposure grew:\n%s", report)
}

// debUnticked is the lines of a systemd-analyze security report that count
// against the unit.
func debUnticked(report string) string {
	var lines []string
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "✗") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(lines, "\n")
}

// debBinaryVersion checks that /usr/bin/latchkey is version's build:
// `latchkey version` names it. On a tree without that command yet (it
// comes with s31/version), dpkg's version and the file's replacement
// (another inode) are what the caller checked, and this says so.
func debBinaryVersion(t *testing.T, version string) {
	t.Helper()
	out, err := exec.Command("/usr/bin/latchkey", "version").CombinedOutput()
	require.NoError(t, err, "latchkey version:\n%s", out)
	require.Contains(t, string(out), version, "latchkey version")
}

// debInode is a file's inode number: dpkg installs a new file under a
// new one.
func debInode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestDebianPackage installs version A of the package, runs it as its unit
// would and signs a user in, upgrades to version B with the conffile edited
// (the edit and the data survive), then removes (data and conffiles kept)
// and purges (everything gone) the package.
func TestDebianPackage(t *testing.T) {
	start := time.Now()
	step := func(what string) { t.Logf("%s: %s", time.Since(start).Round(100*time.Millisecond), what) }
	debMachineReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := debRepoRoot(t)
	work := t.TempDir()

	// Meanwhile: systemd-analyze (installed with apt-get when missing),
	// and nfpm built for build.sh.
	tools := make(chan error, 1)
	go func() {
		var err error
		for _, args := range [][]string{{"packaging/install-systemd-tools.sh"}, {"packaging/deb/build.sh", "--prepare"}} {
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = root
			if out, e := cmd.CombinedOutput(); e != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), e, out))
			}
		}
		tools <- err
	}()
	binA, err := debBinary(ctx, root, work, debVersionA)
	require.NoError(t, err)
	require.NoError(t, <-tools)
	debA, err := debPackage(ctx, root, binA, work, debVersionA, "")
	require.NoError(t, err)
	step("built " + filepath.Base(debA))
	// Version B is built while A is installed and run (its compilation is
	// cached by now: only the link differs). Its config.yaml documents one
	// more line, as a release's often does: dpkg must then keep the
	// operator's edited file and put B's beside it.
	configB := filepath.Join(work, "config-b.yaml")
	const newInB = "# A key documented in version B.\n"
	require.NoError(t, os.WriteFile(configB, []byte(debRead(t, filepath.Join(root, "config.yaml"))+newInB), 0o644))
	type built struct {
		deb string
		err error
	}
	versionB := make(chan built, 1)
	go func() {
		deb, err := debBuild(ctx, root, work, debVersionB, configB)
		versionB <- built{deb, err}
	}()

	// Whatever happens below, the machine is left without latchkey.
	t.Cleanup(func() {
		if status, _ := debInstalled(); status != "" {
			if out, err := exec.Command("dpkg", "--purge", "latchkey").CombinedOutput(); err != nil {
				t.Errorf("clean-up: dpkg --purge latchkey: %v\n%s", err, out)
			}
		}
	})

	// ---- install A ----
	dpkg(t, "-i", debA)
	step("installed " + debVersionA)
	status, version := debInstalled()
	require.Equal(t, "installed", status)
	require.Equal(t, debVersionA, version)
	debMode(t, "/usr/bin/latchkey", 0o755, "root", "root")
	debMode(t, debConfigPath, 0o644, "root", "root")
	debMode(t, debEnvPath, 0o600, "root", "root")
	debMode(t, debUnitPath, 0o644, "root", "root")
	debMode(t, debStateDir, 0o700, "latchkey", "latchkey")
	conffiles := debCommand(t, "dpkg-query", "-W", "-f=${Conffiles}", "latchkey")
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(conffiles), "\n") {
		names = append(names, strings.Fields(l)[0])
	}
	require.Equal(t, []string{debConfigPath, debEnvPath}, names, "the conffiles:\n%s", conffiles)
	u, err := user.Lookup("latchkey")
	require.NoError(t, err, "the postinst makes the latchkey user")
	uid, _ := strconv.Atoi(u.Uid)
	require.Less(t, uid, 1000, "a system user")
	require.Equal(t, debStateDir, u.HomeDir)
	passwd := debCommand(t, "getent", "passwd", "latchkey")
	require.True(t, strings.HasSuffix(strings.TrimSpace(passwd), ":/usr/sbin/nologin"), "no login shell: %s", passwd)
	_, err = user.LookupGroup("latchkey")
	require.NoError(t, err, "and its group")
	// Enabled, not started (deb-systemd-helper works without systemd).
	_, err = os.Stat("/etc/systemd/system/multi-user.target.wants/latchkey.service")
	require.NoError(t, err, "the postinst enables the unit")
	config := debRead(t, debConfigPath)
	require.Contains(t, config, "\ndata_dir: /var/lib/latchkey\n")
	require.Contains(t, debRead(t, debEnvPath), "#AUTH_SECRET=")

	debCheckUnit(t)
	step("unit verified")

	// ---- the operator's configuration ----
	// config.yaml: e-mail sign-in through an SMTP server (a real one, in
	// this process); latchkey.env: the secret and the public URL.
	smtp := smtptest.Start(t, smtptest.Options{})
	const emailProvider = "  - id: email\n    type: email\n"
	require.Equal(t, 1, strings.Count(config, emailProvider), "config.yaml's e-mail provider")
	debEdit(t, debConfigPath, func(s string) string {
		return strings.Replace(s, emailProvider, emailProvider+
			"    server: "+smtp.URL("smtp", "")+"\n"+
			"    from: \"Sign in <no-reply@example.com>\"\n", 1)
	})
	port := debFreePort(t)
	origin := "http://127.0.0.1:" + strconv.Itoa(port)
	base := origin + debBasePath
	secret := debSecret()
	debEdit(t, debEnvPath, func(s string) string {
		s = strings.Replace(s, "#AUTH_SECRET=\n", "AUTH_SECRET="+secret+"\n", 1)
		return s + "SERVICE_URL=" + base + "\nPORT=" + strconv.Itoa(port) + "\n"
	})
	out, err := debAdmin("check-config")
	require.NoError(t, err, "check-config as the latchkey user:\n%s", out)

	// ---- run A as the unit would, sign in ----
	svc := debStart(t)
	svc.waitReady(t, origin)
	step("version A ready")
	br := newDebBrowser(t, base)
	br.signInByEmail(smtp, debSignInEmail, origin+"/home")
	require.Equal(t, debSignInEmail, br.email())
	step("signed in")
	// An admin command as docs/install.md gives it: as the latchkey user
	// (files it makes in /var/lib/latchkey stay the service's), with the
	// environment file.
	out, err = debAdmin("users", "list")
	require.NoError(t, err, "users list:\n%s", out)
	require.Contains(t, string(out), debSignInEmail, "users list")
	db := filepath.Join(debStateDir, "latchkey.db")
	debMode(t, db, 0o600, "latchkey", "latchkey")
	debGone(t, filepath.Join(debStateDir, "secret")) // AUTH_SECRET is set
	svc.stop(t)

	// ---- upgrade to B, the conffile edited ----
	marker := "# the operator's edit " + debSecret()[:12]
	debEdit(t, debConfigPath, func(s string) string { return s + marker + "\n" })
	edited, env := debRead(t, debConfigPath), debRead(t, debEnvPath)
	inode := debInode(t, "/usr/bin/latchkey")
	b := <-versionB
	require.NoError(t, b.err)
	step("built " + filepath.Base(b.deb))
	dpkg(t, "-i", b.deb)
	step("upgraded to " + debVersionB)
	_, version = debInstalled()
	require.Equal(t, debVersionB, version)
	require.NotEqual(t, inode, debInode(t, "/usr/bin/latchkey"), "dpkg put B's binary in place")
	debBinaryVersion(t, debVersionB)
	require.Equal(t, edited, debRead(t, debConfigPath), "the edited conffile survives the upgrade")
	require.NotContains(t, edited, newInB)
	require.Equal(t, env, debRead(t, debEnvPath), "and the environment file")
	debMode(t, debEnvPath, 0o600, "root", "root")
	dist := debConfigPath + ".dpkg-dist"
	require.True(t, strings.HasSuffix(debRead(t, dist), newInB), "B's config.yaml waits beside the operator's as %s", dist)
	leftovers, _ := filepath.Glob("/etc/latchkey/*.dpkg-*")
	require.Equal(t, []string{dist}, leftovers, "nothing else beside the conffiles (the environment file did not change in B)")

	svc = debStart(t)
	svc.waitReady(t, origin)
	require.Equal(t, debSignInEmail, br.email(), "B finds the session A's sign-in made: the data stayed")
	step("version B ready, the user still signed in")
	svc.stop(t)

	// ---- remove: data, conffiles and user stay ----
	dpkg(t, "-r", "latchkey")
	status, _ = debInstalled()
	require.Equal(t, "config-files", status)
	debGone(t, "/usr/bin/latchkey")
	debGone(t, debUnitPath)
	debMode(t, db, 0o600, "latchkey", "latchkey")
	require.Equal(t, edited, debRead(t, debConfigPath), "remove keeps the conffiles")
	require.Equal(t, env, debRead(t, debEnvPath))
	_, err = user.Lookup("latchkey")
	require.NoError(t, err, "remove keeps the user (it owns the data)")

	// ---- purge: everything goes ----
	dpkg(t, "--purge", "latchkey")
	status, _ = debInstalled()
	require.Empty(t, status, "dpkg forgets the package")
	for _, p := range []string{"/etc/latchkey", debStateDir,
		"/etc/systemd/system/latchkey.service", // the mask remove put there
		"/etc/systemd/system/multi-user.target.wants/latchkey.service"} {
		debGone(t, p)
	}
	state, _ := filepath.Glob("/var/lib/systemd/deb-systemd-helper-*/*latchkey*")
	more, _ := filepath.Glob("/var/lib/systemd/deb-systemd-helper-*/*/*latchkey*")
	require.Empty(t, append(state, more...), "deb-systemd-helper forgets the unit")
	_, err = user.Lookup("latchkey")
	require.Error(t, err, "purge deletes the user")
	_, err = user.LookupGroup("latchkey")
	require.Error(t, err, "and its group")
	step("removed and purged")
}
