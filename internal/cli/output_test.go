package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testKind = Prefixed("a test file", "cnperf-test\n")

// The output rule, path by path: inputs (by inode, through another name),
// other outputs (also not yet existing), foreign files, links; --force.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in := write("in.json", "{}")
	if err := os.Link(in, filepath.Join(dir, "hard.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	ours := write("ours.txt", "cnperf-test\nmore\n")
	foreign := write("notes.txt", "my notes\n")
	empty := write("empty.txt", "")
	if err := os.Symlink(ours, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("csv/params.csv", "mine\n")
	out := func(flag, path string) Output { return Output{Flag: flag, Path: path, Kind: testKind, Example: "x"} }
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		name   string
		inputs []string
		force  bool
		outs   []Output
		want   string // "" passes
	}{
		{"new file", []string{in}, false, []Output{out("--a", p("new.txt"))}, ""},
		{"an input", []string{in}, false, []Output{out("--a", in)}, "would overwrite " + in + ", an input"},
		{"an input by another name", []string{in}, true, []Output{out("--a", p("hard.json"))}, "an input"},
		{"an input through a linked folder", []string{in}, true, []Output{out("--a", p("via/in.json"))}, "an input"},
		{"two outputs, one new file", nil, false, []Output{out("--a", p("new.txt")), out("--b", p("via/new.txt"))}, "are one file"},
		{"two outputs, one existing file", nil, true, []Output{out("--a", ours), out("--b", ours)}, "are one file"},
		{"a file in an output folder", nil, true, []Output{{Flag: "--csv", Path: p("csv"), Dir: true, Names: []string{"params.csv"}, Kind: testKind}, out("--b", p("csv/params.csv"))}, "are one file"},
		{"ours", nil, false, []Output{out("--a", ours)}, ""},
		{"foreign", nil, false, []Output{out("--a", foreign)}, "exists and is not a test file; choose another path, or add --force"},
		{"foreign, forced", nil, true, []Output{out("--a", foreign)}, ""},
		{"empty", nil, false, []Output{out("--a", empty)}, ""},
		{"a link", nil, false, []Output{out("--a", p("link.txt"))}, "is a symlink"},
		{"foreign in a folder", nil, false, []Output{{Flag: "--csv", Path: p("csv"), Dir: true, Names: []string{"params.csv"}, Kind: testKind}}, "params.csv exists and is not a test file"},
		{"not asked", []string{in}, false, []Output{out("--a", "")}, ""},
		{"one to stdout", []string{in}, false, []Output{out("--a", "-"), out("--b", p("new.txt"))}, ""},
		{"two to stdout", nil, false, []Output{out("--a", "-"), out("--b", "-")}, "only one output can go to standard output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckOutputs(c.inputs, c.force, c.outs...)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("CheckOutputs: %v, want %q", err, c.want)
			}
		})
	}
}

// WriteFile leaves the old file whole when writing fails, and no
// temporary file.
func TestWriteFileAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteBytes("--a", path, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile("--a", path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "--a "+path+": ") {
		t.Errorf("WriteFile: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("after a failed write: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
}
