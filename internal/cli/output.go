package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/tmpdir"
)

// The output rule, for every path any command writes (results, HTML, CSV,
// OpenMetrics, NDJSON, JUnit, JSON, .hgrm, image archives):
//
//   - never one of the command's own inputs, nor another output of the
//     same command: compared by device and inode where both exist, by
//     their absolute path (folder links resolved) where one does not yet;
//   - an existing file is replaced only if it is cnperf's own kind of
//     file (its Kind recognises its first bytes), is empty (mktemp's), or
//     the command was given --force; a symbolic link is never replaced by
//     a file without --force;
//   - written whole or not at all: to a temporary file in the same folder,
//     renamed over the path once complete (WriteFile), so that a full disk
//     or a kill leaves the old file or none, never half of one.
//
// CheckOutputs applies the first two before any work (bad usage, exit
// status 2); WriteFile the last. The path "-" is standard output, where a
// command allows it (at most one output may be "-").

// Kind is a kind of file cnperf writes, known by its content (most by
// their first bytes: Head).
type Kind struct {
	Name string                 // for messages: "a cnperf results file"
	Is   func(path string) bool // whether the existing file at path is one
}

// Head is a Kind.Is that looks at the first HeadSize bytes of the file.
func Head(is func(head []byte) bool) func(path string) bool {
	return func(path string) bool { return is(head(path)) }
}

// HeadSize is how much of an existing file a Kind sees.
const HeadSize = 4096

// Output is one path a command writes.
type Output struct {
	Flag    string // "--html"
	Path    string // "" when not asked for; "-" standard output
	Example string // a good path, for messages: "report.html"
	Kind    Kind
	// Dir: the path is a folder cnperf writes files into (--csv, --hgrm);
	// Names are the files it will hold where known beforehand (the
	// others are checked as they are written, with CheckReplace).
	Dir   bool
	Names []string
	// Match, for a folder whose files are named by what is measured: a
	// pattern (*.hgrm) every existing file it matches must fit Kind.
	Match string
}

// ForceUsage is the usage of every command's --force, which lets its
// outputs replace files of other kinds.
const ForceUsage = "let the outputs replace existing files that are not of their kind (or a symlink); never an input"

// Stdout is the path meaning standard output.
const Stdout = "-"

// CheckOutputs refuses, before any work, an output that cannot be
// written (CheckOutFile, CheckOutDir), that is one of inputs or another
// output, or that would replace a file of another kind without force.
// Outputs with an empty path are not asked for.
func CheckOutputs(inputs []string, force bool, outs ...Output) error {
	type named struct{ flag, path string }
	var seen []named
	stdout := ""
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		if o.Path == Stdout {
			if stdout != "" {
				return fmt.Errorf("%s - and %s -: only one output can go to standard output", stdout, o.Flag)
			}
			stdout = o.Flag
			continue
		}
		if o.Dir {
			if err := CheckOutDir(o.Flag, o.Path); err != nil {
				return err
			}
		} else if err := CheckOutFile(o.Flag, o.Path, o.Example); err != nil {
			return err
		}
		paths := []string{o.Path}
		if o.Dir {
			names := o.Names
			if o.Match != "" {
				m, _ := filepath.Glob(filepath.Join(o.Path, o.Match))
				for _, p := range m {
					names = append(names, filepath.Base(p))
				}
			}
			o.Names = names
			for _, n := range o.Names {
				paths = append(paths, filepath.Join(o.Path, n))
			}
		}
		var mine []named
		for _, p := range paths {
			for _, in := range inputs {
				if in != "" && in != Stdout && SamePath(p, in) {
					return fmt.Errorf("%s %s would overwrite %s, an input of this command; choose another path", o.Flag, o.Path, in)
				}
			}
			// against the other outputs (a folder's own files may repeat:
			// several inputs' .hgrm files of one cell)
			for _, s := range seen {
				if SamePath(p, s.path) {
					return fmt.Errorf("%s %s and %s %s are one file; give each output its own path", s.flag, s.path, o.Flag, o.Path)
				}
			}
			mine = append(mine, named{o.Flag, p})
		}
		seen = append(seen, mine...)
		if !o.Dir {
			if err := CheckReplace(o.Flag, o.Path, o.Kind, force); err != nil {
				return err
			}
			continue
		}
		for _, n := range o.Names {
			if err := CheckReplace(o.Flag, filepath.Join(o.Path, n), o.Kind, force); err != nil {
				return err
			}
		}
	}
	return nil
}

// SamePath says whether paths a and b name one file: the same device and
// inode where both exist, else the same absolute path once the links in
// their folders are resolved.
func SamePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if errA == nil || errB == nil {
		return false // one exists, the other does not
	}
	return canonical(a) == canonical(b)
}

// canonical is path made absolute, the links of its folder resolved.
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// CheckReplace refuses an existing path the output rule does not let a
// command replace: a symbolic link, or a non-empty file that kind does not
// recognise, unless force.
func CheckReplace(flag, path string, kind Kind, force bool) error {
	st, err := os.Lstat(path)
	if err != nil || force {
		return nil // nothing there, or the user said so
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s %s is a symlink; it would be replaced with a file: name the file it points to, or add --force", flag, path)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil // not a file (CheckOutFile refuses it), or mktemp's empty one
	}
	if kind.Is != nil && kind.Is(path) {
		return nil
	}
	what := "a file cnperf wrote"
	if kind.Name != "" {
		what = kind.Name
	}
	return fmt.Errorf("%s %s exists and is not %s; choose another path, or add --force to replace it", flag, path, what)
}

// head is the first HeadSize bytes of path (nil when unreadable).
func head(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, HeadSize))
	return b
}

// WriteFile writes path through a temporary file in its folder, renamed
// over it once complete (mode 0644): a reader never sees half a file, and
// a write that fails (a full disk) leaves the old file, or none, and no
// temporary one. Path "-" writes to standard output.
func WriteFile(flag, path string, write func(io.Writer) error) error {
	if path == Stdout {
		if err := write(os.Stdout); err != nil {
			return fmt.Errorf("%s -: %w", flag, err)
		}
		return nil
	}
	if err := tmpdir.ReplaceFile(path, ".cnperf-out-*.tmp", write); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return nil
}

// WriteBytes is WriteFile of b.
func WriteBytes(flag, path string, b []byte) error {
	return WriteFile(flag, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// SchemaJSON is a kind of JSON file whose first key is "schema" with a
// value starting with prefix ("cnperf/run/").
func SchemaJSON(name, prefix string) Kind {
	return Kind{Name: name, Is: Head(func(head []byte) bool {
		return strings.HasPrefix(firstKey(head, "schema"), prefix)
	})}
}

// firstKey is the string value of a JSON object's first key when that
// key is key ("" otherwise).
func firstKey(head []byte, key string) string {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if t, err := dec.Token(); err != nil || t != key {
		return ""
	}
	t, err := dec.Token()
	if s, ok := t.(string); err == nil && ok {
		return s
	}
	return ""
}

// FirstKeyJSON is a kind of JSON file whose first key is key and that
// holds every one of also within its head.
func FirstKeyJSON(name, key string, also ...string) Kind {
	return Kind{Name: name, Is: Head(func(head []byte) bool {
		dec := json.NewDecoder(bytes.NewReader(head))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return false
		}
		if t, err := dec.Token(); err != nil || t != key {
			return false
		}
		for _, a := range also {
			if !bytes.Contains(head, []byte(`"`+a+`"`)) {
				return false
			}
		}
		return true
	})}
}

// Prefixed is a kind of text file starting with one of prefixes (after
// leading white space).
func Prefixed(name string, prefixes ...string) Kind {
	return Kind{Name: name, Is: Head(func(head []byte) bool {
		h := bytes.TrimLeft(head, " \t\r\n")
		for _, p := range prefixes {
			if bytes.HasPrefix(h, []byte(p)) {
				return true
			}
		}
		return false
	})}
}

// Containing is a kind of file whose head starts with start and holds
// mark (an HTML page's title, a JUnit file's suite name).
func Containing(name, start, mark string) Kind {
	return Kind{Name: name, Is: Head(func(head []byte) bool {
		return bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(start)) && bytes.Contains(head, []byte(mark))
	})}
}
