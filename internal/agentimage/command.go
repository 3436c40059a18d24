package agentimage

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Flags is how a command makes and parses its flags, and its interrupt
// context (cnperf's own, so that errors and -h read as every command's).
type Flags struct {
	New         func(name string) *flag.FlagSet
	Parse       func(fs *flag.FlagSet, args []string) error
	Interrupted func() (context.Context, context.CancelFunc)
}

// Command runs `cnperf image ARGS`: it builds the agent image a cluster
// runs (--backend kubernetes --image), as an archive file or pushed to a
// registry.
func Command(args []string, f Flags) error {
	const use = "use `cnperf image build [--out FILE]` or `cnperf image push REF`"
	if len(args) == 0 {
		return fmt.Errorf("which? %s", use)
	}
	switch args[0] {
	case "build":
		return imageBuild(args[1:], f)
	case "push":
		return imagePush(args[1:], f)
	case "-h", "--help", "help":
		fmt.Println("usage: cnperf image build [--binary PATH] [--tag REF] [--out FILE]\n       cnperf image push REF [--binary PATH] [--insecure]\n\n`cnperf image build -h` and `cnperf image push -h` show the flags.")
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown image command %q; %s", args[0], use)
}

// imageBinary is the binary the image carries: --binary, or this cnperf.
func imageBinary(fs *flag.FlagSet) *string {
	return fs.String("binary", "", "the static cnperf binary the image carries (default: this cnperf; build one with CGO_ENABLED=0 go build ./cmd/cnperf)")
}

func buildImage(binary string) (*Image, error) {
	if binary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		binary = self
	}
	return Build(binary)
}

func imageBuild(args []string, f Flags) error {
	fs := f.New("image build")
	binary := imageBinary(fs)
	tag := fs.String("tag", "", "the image's name in the archive (default: cnperf-agent:<first 12 hex digits of the binary's SHA-256>)")
	out := fs.String("out", "", "the archive file (default: cnperf-agent-<those digits>.tar in the current folder)")
	if err := f.Parse(fs, args); err != nil {
		return err
	}
	im, err := buildImage(*binary)
	if err != nil {
		return err
	}
	ref := *tag
	if ref == "" {
		ref = im.DefaultTag()
	}
	t, err := ParseTag(ref, false)
	if err != nil {
		return fmt.Errorf("--tag: %w", err)
	}
	path := *out
	if path == "" {
		path = Repo + "-" + im.BinarySHA[:12] + ".tar"
	}
	if err := WriteFile(path, im, t); err != nil {
		return err
	}
	dig, err := im.Digest()
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes): %s, %s, linux/%s\n", path, fi.Size(), ref, dig, im.Arch)
	fmt.Printf("load it with `docker load -i %s` or, on each node, `ctr -n k8s.io images import %s`; then --backend kubernetes --image %s\n", path, path, ref)
	return nil
}

func imagePush(args []string, f Flags) error {
	fs := f.New("image push")
	binary := imageBinary(fs)
	insecure := fs.Bool("insecure", false, "the registry speaks plain HTTP (loopback, .local and private addresses are tried that way anyway)")
	// REF may come first (`push REF --insecure`) or last
	var ref string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		ref, args = args[0], args[1:]
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return f.Parse(fs, args) // the one-line error, or -h
	}
	if rest := fs.Args(); ref == "" && len(rest) == 1 {
		ref = rest[0]
	} else if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q; use `cnperf image push REF [--binary PATH] [--insecure]`", rest[len(rest)-1])
	}
	if ref == "" {
		return errors.New("push where? use `cnperf image push REGISTRY/REPOSITORY:TAG`, such as 127.0.0.1:5000/cnperf-agent:v1")
	}
	t, err := ParseTag(ref, *insecure)
	if err != nil {
		return err
	}
	im, err := buildImage(*binary)
	if err != nil {
		return err
	}
	ctx, stop := f.Interrupted()
	defer stop()
	dig, err := Push(ctx, im, t, nil)
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s (linux/%s)\n", ref, dig, im.Arch)
	fmt.Printf("run with --backend kubernetes --image %s (add --image-pull-secret NAME if the nodes need credentials for it)\n", ref)
	return nil
}
