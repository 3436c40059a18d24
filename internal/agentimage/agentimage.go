// Package agentimage makes the agent image a cluster runs: FROM scratch,
// the static cnperf binary at /cnperf and an empty /tmp, nothing else.
// Build makes it from a binary, Write stores it as one archive file that
// `docker load` and `ctr images import` both take (an OCI image layout
// with Docker's manifest.json beside it, as `docker save` writes since
// Engine 25), Push sends it to a registry with the user's Docker
// credentials.
//
// The image is reproducible: every time, date, owner and order in it is
// fixed, so one binary gives a byte-identical archive and the same digest
// on every machine and every run.
package agentimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// AgentPath is where the binary sits in the image.
const AgentPath = "/cnperf"

// Repo is the image's repository when none is named; its tag is the first
// 12 hex digits of the binary's SHA-256 (as the Docker backend names its
// agent images).
const Repo = "cnperf-agent"

// The image's labels.
const (
	LabelAgent  = "cnperf.agent"         // "1"
	LabelBinary = "cnperf.binary.sha256" // the binary's SHA-256
)

// epoch is the image's every date: the Unix epoch, as SOURCE_DATE_EPOCH=0
// builds do, so that building again changes nothing.
var epoch = time.Unix(0, 0).UTC()

// Image is the agent image of one binary.
type Image struct {
	v1.Image
	BinarySHA string // hex SHA-256 of the binary
	Arch      string // GOARCH of the binary (amd64, arm64...)
}

// DefaultTag is Repo:<first 12 hex digits of the binary's SHA-256>.
func (im *Image) DefaultTag() string { return Repo + ":" + im.BinarySHA[:12] }

// Digest is the image manifest's digest: what a registry and a node's
// runtime call the image.
func (im *Image) Digest() (string, error) {
	d, err := im.Image.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// goarch maps an ELF machine to the image platform's architecture.
var goarch = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv64", elf.EM_LOONGARCH: "loong64",
}

// Build makes the agent image of the cnperf binary at path, which must be
// static: FROM scratch has no C library for a dynamic one.
func Build(path string) (*Image, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agent binary: %w", err)
	}
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("agent binary %s is not a Linux executable (%v); give a cnperf built for Linux", path, err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("agent binary %s is dynamically linked and the image has no C library; build it static: CGO_ENABLED=0 go build ./cmd/cnperf, then --binary ./cnperf", path)
		}
	}
	arch, ok := goarch[ef.Machine]
	if !ok {
		return nil, fmt.Errorf("agent binary %s: ELF machine %v has no image platform cnperf knows", path, ef.Machine)
	}
	sum := sha256.Sum256(bin)
	im := &Image{BinarySHA: hex.EncodeToString(sum[:]), Arch: arch}

	root, err := rootFS(bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(root)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "cnperf image build", Comment: "the static cnperf binary at " + AgentPath},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = arch, "linux"
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config = v1.Config{
		Entrypoint: []string{AgentPath},
		Cmd:        []string{"agent"},
		WorkingDir: "/",
		Labels:     map[string]string{LabelAgent: "1", LabelBinary: im.BinarySHA},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	im.Image = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return im, nil
}

// rootFS is the image's one layer: /cnperf and an empty /tmp, owned by
// root, dated the epoch.
func rootFS(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdrs := []*tar.Header{
		{Name: "cnperf", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))},
		{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
	}
	for _, h := range hdrs {
		h.ModTime, h.Format = epoch, tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bin); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseTag checks an image reference for an archive or a push: a tag, not
// a digest (a digest names content that Build makes, not the user).
func ParseTag(ref string, insecure bool) (name.Tag, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	t, err := name.NewTag(ref, opts...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %q: %v; use REGISTRY/REPOSITORY:TAG, such as 127.0.0.1:5000/cnperf-agent:v1", ref, err)
	}
	return t, nil
}

// fullName is the reference as containerd and Docker store it
// (docker.io/library/cnperf-agent:TAG for a bare cnperf-agent:TAG).
func fullName(t name.Tag) string {
	reg := t.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + t.RepositoryStr() + ":" + t.TagStr()
}

// shortName is the reference as `docker images` shows it.
func shortName(t name.Tag) string {
	if t.RegistryStr() == name.DefaultRegistry {
		repo, _ := strings.CutPrefix(t.RepositoryStr(), "library/")
		return repo + ":" + t.TagStr()
	}
	return t.RegistryStr() + "/" + t.RepositoryStr() + ":" + t.TagStr()
}

// Write stores im, tagged tag, as one tar archive: an OCI image layout
// (oci-layout, index.json, blobs/sha256/...) that containerd reads, and
// Docker's manifest.json over the same blobs, which every `docker load`
// reads (Engine 20.10 knows nothing else). Every entry is dated the epoch,
// owned by root and in a fixed order.
func Write(w io.Writer, im *Image, tag name.Tag) error {
	manifest, err := im.RawManifest()
	if err != nil {
		return err
	}
	mdig, err := im.Image.Digest()
	if err != nil {
		return err
	}
	config, err := im.RawConfigFile()
	if err != nil {
		return err
	}
	cdig, err := im.ConfigName()
	if err != nil {
		return err
	}
	layers, err := im.Layers()
	if err != nil {
		return err
	}
	type blob struct {
		path string
		data []byte
	}
	var blobs []blob
	blobPath := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	var layerPaths []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		blobs = append(blobs, blob{blobPath(d), b})
		layerPaths = append(layerPaths, blobPath(d))
	}
	blobs = append(blobs, blob{blobPath(cdig), config}, blob{blobPath(mdig), manifest})

	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     string(types.OCIImageIndex),
		"manifests": []map[string]any{{
			"mediaType": string(types.OCIManifestSchema1),
			"digest":    mdig.String(),
			"size":      len(manifest),
			"annotations": map[string]string{
				"io.containerd.image.name":          fullName(tag),
				"org.opencontainers.image.ref.name": tag.TagStr(),
			},
		}},
	})
	if err != nil {
		return err
	}
	dockerManifest, err := json.Marshal([]map[string]any{{
		"Config":   blobPath(cdig),
		"RepoTags": []string{shortName(tag)},
		"Layers":   layerPaths,
	}})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	file := func(name string, data []byte) error {
		h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	if err := dir("blobs/"); err != nil {
		return err
	}
	if err := dir("blobs/sha256/"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, b := range blobs {
		if seen[b.path] {
			continue
		}
		seen[b.path] = true
		if err := file(b.path, b.data); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"index.json", index},
		{"manifest.json", dockerManifest},
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	} {
		if err := file(f.name, f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Kind is an archive Write wrote, as the output rule (package cli) knows
// it: a tar whose first entry is blobs/ and whose last three are
// index.json, manifest.json and oci-layout, in that order.
var Kind = cli.Kind{Name: "an image archive cnperf wrote", Is: func(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		if len(names) == 0 && h.Name != "blobs/" {
			return false
		}
		names = append(names, h.Name)
	}
	n := len(names)
	return n > 3 && names[n-3] == "index.json" && names[n-2] == "manifest.json" && names[n-1] == "oci-layout"
}}

// WriteFile writes the archive to path, through a temporary file beside
// it, so that a failed write leaves no half archive behind.
func WriteFile(path string, im *Image, tag name.Tag) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".cnperf-image-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = Write(f, im, tag); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// DefaultPushTimeout bounds a push (image push --timeout).
const DefaultPushTimeout = 5 * time.Minute

// noAnswer bounds each wait for a registry's answer to one request
// (dial, TLS, the response's headers), within a push's deadline: a
// registry that accepts and never answers ends the push then, not when
// the whole push's deadline comes.
const noAnswer = 30 * time.Second

// Push sends im to the registry tag names, as tag, with the credentials
// `docker login` left for that registry ($DOCKER_CONFIG/config.json or
// ~/.docker/config.json, credential helpers included; anonymous when it
// has none). It returns the pushed manifest's digest. The push ends
// within timeout (DefaultPushTimeout when 0), each request's answer
// waited for at most 30 s, or timeout if shorter; the error names the
// registry and the deadline, or that ctx was cancelled (Ctrl-C).
func Push(ctx context.Context, im *Image, tag name.Tag, kc authn.Keychain, timeout time.Duration) (string, error) {
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	if timeout <= 0 {
		timeout = DefaultPushTimeout
	}
	auth, err := kc.Resolve(tag.Context())
	if err != nil {
		return "", fmt.Errorf("pushing %s: reading the credentials for %s: %w", tag, tag.RegistryStr(), err)
	}
	wait := min(noAnswer, timeout)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: wait, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout = wait, wait
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := remote.Write(tag, im.Image, remote.WithContext(pctx), remote.WithAuth(auth), remote.WithTransport(tr), remote.WithUserAgent("cnperf")); err != nil {
		switch {
		case ctx.Err() != nil:
			return "", fmt.Errorf("pushing %s: interrupted while talking to %s", tag, tag.RegistryStr())
		case pctx.Err() != nil || containsAny(err.Error(), "timeout awaiting response headers", "TLS handshake timeout", "i/o timeout"):
			return "", fmt.Errorf("pushing %s: the registry %s did not answer in time (each answer waited for %v, the push at most %v: --timeout); is it up, and is it a registry?",
				tag, tag.RegistryStr(), wait, timeout)
		}
		return "", explainPush(tag, err, auth != authn.Anonymous)
	}
	return im.Digest()
}

// explainPush turns a registry's refusal into what to do about it;
// withCreds: credentials of `docker login` were sent (and refused).
func explainPush(tag name.Tag, err error, withCreds bool) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	refused := func() error {
		if withCreds {
			return fmt.Errorf("pushing %s: %s; the registry refused the credentials `docker login` left for %s: check them, docker login %s", tag, msg, tag.RegistryStr(), tag.RegistryStr())
		}
		return fmt.Errorf("pushing %s: %s; log in first: docker login %s", tag, msg, tag.RegistryStr())
	}
	var te *transport.Error
	if errors.As(err, &te) {
		msg = fmt.Sprintf("the registry answered %d %s", te.StatusCode, http.StatusText(te.StatusCode))
		for _, d := range te.Errors {
			msg += " (" + string(d.Code) + ": " + d.Message + ")"
		}
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return refused()
		}
	}
	switch {
	case containsAny(msg, "UNAUTHORIZED", "DENIED", "401", "403"):
		return refused()
	case containsAny(msg, "connection refused", "no such host", "i/o timeout"):
		return fmt.Errorf("pushing %s: %s; is the registry %s up and reachable from here?", tag, msg, tag.RegistryStr())
	case containsAny(msg, "server gave HTTP response to HTTPS client", "tls:", "x509"):
		return fmt.Errorf("pushing %s: %s; for a registry without TLS add --insecure", tag, msg)
	}
	return fmt.Errorf("pushing %s: %s", tag, msg)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
