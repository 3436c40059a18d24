package agentimage

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/cnperf/cnperf/internal/cli"
)

// Command is `cnperf image`: it builds the agent image a cluster runs
// (--backend kubernetes --image), as an archive file or pushed to a
// registry; interrupted is the context of a push.
func Command(interrupted func() (context.Context, context.CancelFunc)) *cli.Command {
	return &cli.Command{Name: "image", Summary: "build the agent image --backend kubernetes runs: an archive file, or pushed to a registry", Subs: []*cli.Command{
		{Name: "build", Summary: "write the image as an archive (docker load, ctr images import)", Run: imageBuild},
		{Name: "push", Args: "REF", Summary: "push the image to a registry: REGISTRY/REPOSITORY:TAG", Run: func(c *cli.Ctx) error { return imagePush(c, interrupted) }},
	}}
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

func imageBuild(c *cli.Ctx) error {
	fs := c.Flags()
	binary := imageBinary(fs)
	tag := fs.String("tag", "", "the image's name in the archive (default: cnperf-agent:<first 12 hex digits of the binary's SHA-256>)")
	out := fs.String("out", "", "the archive file (default: cnperf-agent-<those digits>.tar in the current folder)")
	force := fs.Bool("force", false, cli.ForceUsage)
	if _, err := c.Parse(); err != nil {
		return err
	}
	// the output rule: never the binary read, nor a file that is not an
	// archive of cnperf's (unless --force)
	input := *binary
	if input == "" {
		input, _ = os.Executable()
	}
	check := func(path string) error {
		return cli.CheckOutputs([]string{input}, *force, cli.Output{Flag: "--out", Path: path, Example: "cnperf-agent.tar", Kind: Kind})
	}
	if err := check(*out); err != nil {
		return cli.Usage(err)
	}
	if *tag != "" {
		if _, err := ParseTag(*tag, false); err != nil {
			return cli.Usage(fmt.Errorf("--tag: %w", err))
		}
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
		if err := check(path); err != nil {
			return cli.Usage(err)
		}
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

func imagePush(c *cli.Ctx, interrupted func() (context.Context, context.CancelFunc)) error {
	fs := c.Flags()
	binary := imageBinary(fs)
	insecure := fs.Bool("insecure", false, "the registry speaks plain HTTP (loopback, .local and private addresses are tried that way anyway)")
	timeout := fs.Duration("timeout", DefaultPushTimeout, "give up on the push after this long (each answer of the registry is waited for at most 30 s)")
	args, err := c.Parse()
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return cli.Usagef("unexpected argument %q; use `cnperf image push REF [--binary PATH] [--insecure]`", args[1])
	}
	if len(args) == 0 {
		return cli.Usagef("push where? use `cnperf image push REGISTRY/REPOSITORY:TAG`, such as 127.0.0.1:5000/cnperf-agent:v1")
	}
	ref := args[0]
	if *timeout <= 0 {
		return cli.Usagef("--timeout %v: give a positive duration such as 5m", *timeout)
	}
	t, err := ParseTag(ref, *insecure)
	if err != nil {
		return cli.Usage(err)
	}
	im, err := buildImage(*binary)
	if err != nil {
		return err
	}
	ctx, stop := interrupted()
	defer stop()
	dig, err := Push(ctx, im, t, nil, *timeout)
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s (linux/%s)\n", ref, dig, im.Arch)
	fmt.Printf("run with --backend kubernetes --image %s (add --image-pull-secret NAME if the nodes need credentials for it)\n", ref)
	return nil
}
