//go:build packaging

// Package packaging_test builds latchkey's release artefacts and proves each
// works by installing and running it on this machine.
//
// container_test.go: the container image. The Containerfile is built with
// Debian's buildah (packaging/image.sh, vfs storage), the OCI archive it
// writes is checked, then loaded into a throwaway buildah storage and run:
// the image's own filesystem and entry point, in chroot isolation (this
// machine cannot run OCI isolation), on the host's network. The real
// next-auth client (test/compat's npm packages, so test/compat/install.sh
// must have run) signs a user in by e-mail through it, the link caught by a
// real SMTP server in this process.
package packaging_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// imageUID is the image's user (Containerfile: USER 65532:65532).
const imageUID = 65532

func TestContainerImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the container test runs buildah with the vfs driver and chroot isolation, which need root here (and it chowns /data's host folder to 65532): run it as root")
	}
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	nodeClient := filepath.Join(repo, "test/compat/node_modules/next-auth/package.json")
	if _, err := os.Stat(nodeClient); err != nil {
		t.Fatalf("the real next-auth client is not installed (%v): run test/compat/install.sh (go tool task test does)", err)
	}
	start := time.Now()
	lap := func(what string) { t.Logf("%-28s %5.1fs", what, time.Since(start).Seconds()) }

	containerCmd(t, repo, nil, "packaging/install-buildah.sh")
	lap("buildah installed")
	bins := containerBinaries(t, repo)
	lap("static binaries built")

	dir := t.TempDir()
	ociTar, dockerTar := filepath.Join(dir, "latchkey.oci.tar"), filepath.Join(dir, "latchkey.docker.tar")
	containerCmd(t, repo, []string{"IMAGE_NAME=latchkey:test", "DOCKER_ARCHIVE=" + dockerTar, "TMPDIR=" + dir},
		"packaging/image.sh", append([]string{ociTar, bins["amd64"]}, optional(bins["arm64"])...)...)
	lap("image built and exported")

	oci := checkOCIArchive(t, ociTar, bins)
	docker := readDockerArchive(t, dockerTar)
	require.Equal(t, oci.RootFS.DiffIDs, docker.RootFS.DiffIDs, "the Docker-format archive holds the same layer")
	require.NotNil(t, docker.Config.Healthcheck, "HEALTHCHECK kept in Docker's format")
	require.Equal(t, []string{"CMD", "/latchkey", "health"}, docker.Config.Healthcheck.Test)
	require.Equal(t, 30*time.Second, docker.Config.Healthcheck.Interval)

	// A throwaway storage: vfs copies every layer, so it stays under the
	// test's folder and goes with it.
	b := newBuildah(t, t.TempDir())
	ctr := b.output(t, "from", "--quiet", "--pull-never", "oci-archive:"+ociTar)
	lap("image loaded")

	smtp := smtptest.Start(t, smtptest.Options{})
	port := containerFreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d/api/auth", port)
	data := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(data, 0o700))
	require.NoError(t, os.Chown(data, imageUID, imageUID), "a bind-mounted /data is the image user's")
	conf := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(containerConfig), 0o644))
	runOpts := []string{
		"--isolation", "chroot",
		"--volume", data + ":/data",
		"--volume", conf + ":/config.yaml:ro", // read as ./config.yaml: the working directory is /
		"--env", "AUTH_SECRET=" + rand.Text() + rand.Text(), // 52 characters
		"--env", "SERVICE_URL=" + base,
		"--env", "PORT=" + strconv.Itoa(port),
		"--env", "LISTEN=127.0.0.1",
		"--env", "SMTP_URL=" + smtp.URL("smtp", ""),
	}

	// The image's entry point, as a container engine would start it.
	entry := append(slices.Clone(oci.Config.Entrypoint), oci.Config.Cmd...)
	logs := &containerLog{}
	srv := b.cmd(append(append(append([]string{"run"}, runOpts...), ctr, "--"), entry...)...)
	srv.Stdout, srv.Stderr = logs, logs
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, srv.Start())
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	var pid int
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM) // latchkey shuts down; buildah run then unmounts and returns
		} else {
			_ = syscall.Kill(srv.Process.Pid, syscall.SIGTERM)
		}
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Errorf("latchkey did not stop within 20s of SIGTERM:\n%s", logs)
		}
	}
	t.Cleanup(stop)

	waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/health/ready", port), exited, logs)
	lap("ready")

	// It runs in the image's filesystem, as the image's user.
	pid = findDescendant(t, srv.Process.Pid, "latchkey")
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, field := range []string{"Uid", "Gid"} {
		m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`).FindStringSubmatch(string(status))
		require.NotNil(t, m, "no %s line in /proc/%d/status", field, pid)
		for _, id := range m[1:] {
			require.Equal(t, strconv.Itoa(imageUID), id, "%s (real, effective, saved, file system): %s", field, m[0])
		}
	}
	root, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(root, b.dir+"/"), "latchkey's / is the container's root under %s, not %s", b.dir, root)

	// The HEALTHCHECK's own command, inside the running container.
	health := b.cmd(append(append(append([]string{"run"}, runOpts...), ctr, "--"), docker.Config.Healthcheck.Test[1:]...)...)
	out, err := health.CombinedOutput()
	require.NoError(t, err, "HEALTHCHECK %v: %s", docker.Config.Healthcheck.Test, out)
	require.Contains(t, string(out), "ready")
	lap("health check passed")

	// The real next-auth client signs in by e-mail.
	const email = "ada@example.com"
	callback := fmt.Sprintf("http://127.0.0.1:%d/welcome", port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", "container_signin.mjs", base, email, callback)
	node.Stderr = logs
	stdin, err := node.StdinPipe()
	require.NoError(t, err)
	stdout, err := node.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, node.Start())
	defer func() { cancel(); _ = node.Wait() }()
	lines := bufio.NewScanner(stdout)
	var first struct {
		SignIn struct {
			Error  any
			Status int
			OK     bool
			URL    string
		}
		Errors string
	}
	readLine(t, lines, &first, logs)
	require.Equal(t, http.StatusOK, first.SignIn.Status, "signIn(email): %+v", first)
	require.True(t, first.SignIn.OK, "signIn(email): %+v", first)
	require.Equal(t, base+"/verify-request?provider=email&type=email", first.SignIn.URL)

	mail := smtp.Wait(t, 1)[0]
	require.Equal(t, []string{email}, mail.To)
	parsed, err := smtptest.Parse(mail.Data)
	require.NoError(t, err)
	link := regexp.MustCompile(`https?://\S+/callback/email\?\S+`).FindString(parsed.Text)
	require.True(t, strings.HasPrefix(link, base+"/callback/email?"), "the link names SERVICE_URL: %q", parsed.Text)
	_, err = io.WriteString(stdin, link+"\n")
	require.NoError(t, err)

	var second struct {
		Status   int
		Location string
		Session  struct {
			User struct{ Email string }
		}
		Errors string
	}
	readLine(t, lines, &second, logs)
	require.Equal(t, http.StatusFound, second.Status, "the link: %+v", second)
	require.Equal(t, callback, second.Location)
	require.Equal(t, email, second.Session.User.Email, "getSession() after the link: %+v", second)
	lap("signed in with next-auth")

	// The state is on the volume, the image user's.
	db, err := os.Stat(filepath.Join(data, "latchkey.db"))
	require.NoError(t, err, "the SQLite database is in /data")
	require.Equal(t, uint32(imageUID), db.Sys().(*syscall.Stat_t).Uid)

	// Stopped, the same check fails: it reports on the service, not itself.
	stop()
	out, err = b.cmd(append(append(append([]string{"run"}, runOpts...), ctr, "--"), docker.Config.Healthcheck.Test[1:]...)...).CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "HEALTHCHECK with latchkey stopped: %s", out)
	require.Equal(t, 1, exit.ExitCode(), "%s", out)
	lap("stopped, health check fails")
}

// containerConfig is the config.yaml mounted at /config.yaml: the e-mail
// provider on the test's SMTP server; everything else the defaults
// (data_dir: data, which is /data from the image's working directory).
const containerConfig = `providers:
  - id: email
    type: email
    server: ${SMTP_URL}
    from: "Sign in <no-reply@example.com>"
`

// containerBinaries are the static binaries the image holds, by
// architecture: the package's shared release (packaging/release.sh), so
// the archive is a multi-arch index (both images checked, the amd64 one
// run).
func containerBinaries(t *testing.T, _ string) map[string]string {
	t.Helper()
	r := fullRelease(t)
	return map[string]string{"amd64": r.binary("amd64"), "arm64": r.binary("arm64")}
}

// optional is s as a list of arguments: none when empty.
func optional(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// containerCmd runs a script of the repository, failing the test with its output.
func containerCmd(t *testing.T, repo string, env []string, script string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, script), args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	t.Logf("%s: %s", script, strings.TrimSpace(string(b)))
}

// imageConfig is the part of an image's configuration (OCI's or Docker's
// format: the same names) the test reads.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User         string
		ExposedPorts map[string]struct{}
		Env          []string
		Entrypoint   []string
		Cmd          []string
		Volumes      map[string]struct{}
		WorkingDir   string
		Healthcheck  *struct {
			Test     []string
			Interval time.Duration
			Retries  int
		}
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// checkOCIArchive reads the OCI archive (index.json → manifest, or image
// index → one manifest per architecture → config and layer), checks what
// the Containerfile promises, and returns the amd64 image's configuration.
func checkOCIArchive(t *testing.T, path string, bins map[string]string) imageConfig {
	t.Helper()
	files := readTar(t, path)
	require.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(files["oci-layout"]))
	var index struct {
		Manifests []struct {
			MediaType   string
			Digest      string
			Annotations map[string]string
		}
	}
	require.NoError(t, json.Unmarshal(files["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	require.Equal(t, "latchkey:test", index.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	blob := func(digest string) []byte {
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
		require.True(t, ok, "blob %s in the archive", digest)
		sum := sha256.Sum256(b)
		require.Equal(t, digest, "sha256:"+hex.EncodeToString(sum[:]))
		return b
	}
	if len(bins) == 1 {
		require.Equal(t, "application/vnd.oci.image.manifest.v1+json", index.Manifests[0].MediaType)
		return checkImage(t, blob, index.Manifests[0].Digest, "amd64", bins["amd64"])
	}
	require.Equal(t, "application/vnd.oci.image.index.v1+json", index.Manifests[0].MediaType)
	var list struct {
		Manifests []struct {
			MediaType string
			Digest    string
			Platform  struct{ OS, Architecture string }
		}
	}
	require.NoError(t, json.Unmarshal(blob(index.Manifests[0].Digest), &list))
	require.Len(t, list.Manifests, len(bins))
	var amd64 imageConfig
	for _, m := range list.Manifests {
		require.Equal(t, "application/vnd.oci.image.manifest.v1+json", m.MediaType)
		require.Equal(t, "linux", m.Platform.OS)
		bin, ok := bins[m.Platform.Architecture]
		require.True(t, ok, "an image for %s", m.Platform.Architecture)
		cfg := checkImage(t, blob, m.Digest, m.Platform.Architecture, bin)
		if m.Platform.Architecture == "amd64" {
			amd64 = cfg
		}
	}
	return amd64
}

// checkImage checks one image of the archive: its configuration and its
// one layer, which holds exactly the Containerfile's files.
func checkImage(t *testing.T, blob func(digest string) []byte, digest, arch, bin string) imageConfig {
	t.Helper()
	var manifest struct {
		Config struct{ MediaType, Digest string }
		Layers []struct{ MediaType, Digest string }
	}
	require.NoError(t, json.Unmarshal(blob(digest), &manifest))
	require.Equal(t, "application/vnd.oci.image.config.v1+json", manifest.Config.MediaType)
	var cfg imageConfig
	require.NoError(t, json.Unmarshal(blob(manifest.Config.Digest), &cfg))
	require.Equal(t, "linux/"+arch, cfg.OS+"/"+cfg.Architecture)
	require.Equal(t, "65532:65532", cfg.Config.User, "numeric, so no /etc/passwd look-up decides it")
	require.Equal(t, map[string]struct{}{"3000/tcp": {}}, cfg.Config.ExposedPorts)
	require.Equal(t, []string{"/latchkey"}, cfg.Config.Entrypoint)
	require.Empty(t, cfg.Config.Cmd)
	require.Equal(t, map[string]struct{}{"/data": {}}, cfg.Config.Volumes)
	require.Equal(t, "/", cfg.Config.WorkingDir, "config.yaml's data_dir (data) is then /data")
	require.Contains(t, cfg.Config.Env, "PORT=3000")
	require.Nil(t, cfg.Config.Healthcheck, "OCI's format has no HEALTHCHECK (the Docker-format archive has it)")

	require.Len(t, manifest.Layers, 1)
	require.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", manifest.Layers[0].MediaType)
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0].Digest)))
	require.NoError(t, err)
	layer := tar.NewReader(zr)
	type entry struct {
		mode     os.FileMode
		uid, gid int
		body     []byte
	}
	got := map[string]entry{}
	for {
		h, err := layer.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(layer)
		require.NoError(t, err)
		got[strings.TrimPrefix(h.Name, "./")] = entry{h.FileInfo().Mode(), h.Uid, h.Gid, body}
	}
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	require.Equal(t, []string{"data/", "etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/",
		"etc/ssl/certs/ca-certificates.crt", "latchkey", "tmp/"}, names)
	want, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got["latchkey"].body), "/latchkey is the %s release binary", arch)
	require.Equal(t, os.FileMode(0o755), got["latchkey"].mode)
	require.Equal(t, os.ModeDir|0o700, got["data/"].mode)
	require.Equal(t, [2]int{imageUID, imageUID}, [2]int{got["data/"].uid, got["data/"].gid})
	require.Equal(t, os.ModeDir|os.ModeSticky|0o777, got["tmp/"].mode)
	require.Contains(t, string(got["etc/passwd"].body), ":65532:65532:")
	require.Contains(t, string(got["etc/group"].body), ":65532:")
	require.Contains(t, string(got["etc/ssl/certs/ca-certificates.crt"].body), "-----BEGIN CERTIFICATE-----")
	for n, e := range got {
		if n != "data/" {
			require.Equal(t, [2]int{0, 0}, [2]int{e.uid, e.gid}, "%s is root's: the service cannot change its own files", n)
		}
	}
	return cfg
}

// readDockerArchive returns the configuration of the docker-archive's image.
func readDockerArchive(t *testing.T, path string) imageConfig {
	t.Helper()
	files := readTar(t, path)
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest))
	require.Len(t, manifest, 1)
	require.Equal(t, []string{"docker.io/library/latchkey:test"}, manifest[0].RepoTags)
	var cfg imageConfig
	require.NoError(t, json.Unmarshal(files[manifest[0].Config], &cfg))
	return cfg
}

// readTar reads a whole (small) archive into memory.
func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	files := map[string][]byte{}
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		require.NoError(t, err)
		if h.Typeflag == tar.TypeReg {
			files[strings.TrimPrefix(h.Name, "./")], err = io.ReadAll(r)
			require.NoError(t, err)
		}
	}
}

// buildahStore is buildah on a storage of its own (vfs driver) in dir, its
// temporary files (buildah run's mounts among them) there too.
type buildahStore struct{ dir string }

func newBuildah(t *testing.T, dir string) *buildahStore {
	b := &buildahStore{dir: dir}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o700))
	t.Cleanup(func() {
		_ = b.cmd("rm", "--all").Run()
		// buildah run mounts /proc, /dev, /sys and the volumes inside the
		// container's root while it runs. One left behind would make the
		// temporary folder's removal descend into the host's: detach it.
		for _, m := range mountsUnder(t, dir) {
			t.Errorf("left mounted: %s", m)
			_ = exec.Command("umount", "--recursive", "--lazy", m).Run()
		}
		if left := mountsUnder(t, dir); len(left) > 0 {
			t.Fatalf("still mounted, not removing %s: %v", dir, left)
		}
	})
	return b
}

func (b *buildahStore) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command("buildah", append([]string{"--storage-driver", "vfs",
		"--root", filepath.Join(b.dir, "root"), "--runroot", filepath.Join(b.dir, "run")}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(b.dir, "tmp"))
	return cmd
}

func (b *buildahStore) output(t *testing.T, args ...string) string {
	t.Helper()
	cmd := b.cmd(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "buildah %v: %s", args, stderr.String())
	return strings.TrimSpace(string(out))
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(t *testing.T, dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// findDescendant is the pid of the process named comm among root's
// descendants (buildah run's child, latchkey in its chroot).
func findDescendant(t *testing.T, root int, comm string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	parent, name := map[int]int{}, map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		rest := strings.Fields(s[closing+1:])
		if open < 0 || len(rest) < 2 {
			continue
		}
		name[pid] = s[open+1 : closing]
		parent[pid], _ = strconv.Atoi(rest[1])
	}
	for pid, n := range name {
		if n != comm {
			continue
		}
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				return pid
			}
		}
	}
	t.Fatalf("no %s process under pid %d", comm, root)
	return 0
}

// waitReady polls the ready route until it answers 200.
func waitReady(t *testing.T, url string, exited <-chan error, logs *containerLog) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("the container exited (%v):\n%s", err, logs)
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not ready within 30s:\n%s", url, logs)
}

// readLine decodes the next JSON line the Node client prints.
func readLine(t *testing.T, lines *bufio.Scanner, v any, logs *containerLog) {
	t.Helper()
	if !lines.Scan() {
		t.Fatalf("the next-auth client stopped (%v):\n%s", lines.Err(), logs)
	}
	require.NoError(t, json.Unmarshal(lines.Bytes(), v), "%s", lines.Bytes())
}

func containerFreePort(t *testing.T) int {
	t.Helper()
	return testport.MustFree(t)
}

// containerLog collects the container's and the client's output.
type containerLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *containerLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *containerLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
