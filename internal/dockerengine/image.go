package dockerengine

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// ImageRepo is the agent image's repository; its tag is the first 12 hex
// digits of the cnperf binary's SHA-256, so one image serves every run of
// one binary and a rebuilt binary gets a new one.
const ImageRepo = "cnperf-agent"

// AgentPath is where the binary sits in the image.
const AgentPath = "/cnperf"

// libDirs are searched for a dynamic binary's libraries.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// ImageRef is the agent image's reference for the binary at path.
func ImageRef(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return ImageRepo + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// RootFS is the agent image's file system as a tarball: the binary at
// AgentPath and, when it is dynamically linked (a cgo build), its ELF
// interpreter and the libraries it names, at their own paths. Nothing
// else: no shell, no package manager, nothing pulled.
func RootFS(binary string) ([]byte, error) {
	files := map[string]string{AgentPath: binary} // image path -> host path
	ef, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("agent binary %s: %w", binary, err)
	}
	var interp string
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(p.Open())
			interp = string(bytes.TrimRight(b, "\x00"))
		}
	}
	libs, _ := ef.ImportedLibraries()
	ef.Close()
	if interp != "" {
		files[interp] = interp
		for _, lib := range libs {
			found := ""
			for _, d := range libDirs {
				if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
					found = filepath.Join(d, lib)
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("agent binary %s needs %s, not found in %v; build cnperf static (CGO_ENABLED=0 go build ./cmd/cnperf)", binary, lib, libDirs)
			}
			files[found] = found
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		for d := filepath.Dir(name); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(&tar.Header{Name: d[1:] + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		b, err := os.ReadFile(files[name]) // follows symlinks: the library itself
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name[1:], Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EnsureImage imports the agent image for binary unless the engine has it.
func EnsureImage(ctx context.Context, e *Engine, binary string) (string, error) {
	ref, err := ImageRef(binary)
	if err != nil {
		return "", err
	}
	if ok, err := e.ImageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	root, err := RootFS(binary)
	if err != nil {
		return "", err
	}
	changes := []string{"LABEL " + LabelAgent + "=1", fmt.Sprintf(`CMD ["%s", "agent"]`, AgentPath)}
	if err := e.ImportImage(ctx, ref, changes, bytes.NewReader(root)); err != nil {
		return "", err
	}
	return ref, nil
}
