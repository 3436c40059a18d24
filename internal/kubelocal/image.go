package kubelocal

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cnperf/cnperf/internal/agentimage"
)

// writeImage writes a docker-archive image (what `docker save` writes and
// `ctr images import` reads) named name holding one static binary, bin,
// at /BASENAME, its entrypoint, and an empty /tmp. The same binary gives
// the same bytes: no time stamps, owners 0.
func writeImage(out, name, bin string) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	base := filepath.Base(bin)
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	for _, h := range []*tar.Header{
		{Name: base, Mode: 0o755, Size: int64(len(exe)), Typeflag: tar.TypeReg},
		{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir},
	} {
		h.ModTime = time.Unix(0, 0)
		h.Format = tar.FormatPAX
		if err := lw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := lw.Write(exe); err != nil {
				return err
			}
		}
	}
	if err := lw.Close(); err != nil {
		return err
	}
	diff := sha256.Sum256(layer.Bytes())
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/" + base}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(diff[:])}},
	})
	if err != nil {
		return err
	}
	sum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(sum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{name}, "Layers": []string{"layer.tar"}}})
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		data []byte
	}{{"manifest.json", manifest}, {cfgName, cfg}, {"layer.tar", layer.Bytes()}} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			f.Close()
			return err
		}
		if _, err := io.Copy(tw, bytes.NewReader(e.data)); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeAgentImage writes the agent image as `cnperf image build --binary
// bin --tag name --out out` does.
func writeAgentImage(out, name, bin string) error {
	im, err := agentimage.Build(bin)
	if err != nil {
		return err
	}
	tag, err := agentimage.ParseTag(name, false)
	if err != nil {
		return err
	}
	return agentimage.WriteFile(out, im, tag)
}
