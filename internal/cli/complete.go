package cli

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/registry"
)

// Values are the names a flag's value may take (--networks: the
// networks), for completion, by flag name.
type Values map[string]func() []string

// plainWord is what a completion script may hold without quoting.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_.:+-]+$`)

// choices is an Args that names the words an argument may be.
var choices = regexp.MustCompile(`^[a-z0-9_-]+(\|[a-z0-9_-]+)+$`)

// node is a command of the tree as a completion script sees it.
type node struct {
	path         string // "cluster up"; "" for the root
	subs         []string
	flags        []string // --name
	valued       []string // the flags that take a value
	summary      string
	flagHelp     map[string]string
	commandHelps map[string]string
}

func tree(root *Command) []node {
	var out []node
	root.Walk(func(c *Command) {
		n := node{path: strings.TrimPrefix(strings.TrimPrefix(c.Path(), root.Name), " "), summary: c.Summary,
			flagHelp: map[string]string{}, commandHelps: map[string]string{}}
		for _, s := range c.Subs {
			n.subs = append(n.subs, s.Name)
			n.commandHelps[s.Name] = s.Summary
		}
		// an argument that is one of a few words ("bash|zsh|fish")
		// completes as they do
		if choices.MatchString(c.Args) {
			n.subs = append(n.subs, strings.Split(c.Args, "|")...)
		}
		if len(c.Subs) == 0 {
			Describe(c).VisitAll(func(f *flag.Flag) {
				if !plainWord.MatchString(f.Name) {
					return
				}
				n.flags = append(n.flags, "--"+f.Name)
				if !isSwitch(f) {
					n.valued = append(n.valued, "--"+f.Name)
				}
				_, u := flag.UnquoteUsage(f)
				n.flagHelp[f.Name] = u
			})
		} else if c == root {
			n.subs = append(n.subs, "help")
			n.commandHelps["help"] = "show a command's usage and flags: help COMMAND"
			n.flags = append(n.flags, "--version")
		}
		n.flags = append(n.flags, "--help")
		out = append(out, n)
	})
	return out
}

func words(ws []string) string {
	var ok []string
	for _, w := range ws {
		if plainWord.MatchString(w) {
			ok = append(ok, w)
		}
	}
	return strings.Join(ok, " ")
}

// values lists the flag names with values, sorted, and their words.
func (v Values) sorted() ([]string, map[string]string) {
	var names []string
	out := map[string]string{}
	for k, f := range v {
		if w := words(f()); w != "" && plainWord.MatchString(k) {
			names = append(names, k)
			out[k] = w
		}
	}
	slices.Sort(names)
	return names, out
}

// WriteCompletion writes the completion script of shell (bash, zsh or
// fish) for the command tree under root, with the names of vals.
func WriteCompletion(w io.Writer, shell string, root *Command, vals Values) error {
	switch shell {
	case "bash":
		io.WriteString(w, "# bash completion for "+root.Name+", written by `"+root.Name+" completion bash` from its commands and flags.\n# Load it with: source <("+root.Name+" completion bash)\n")
		writeBashFuncs(w, root, vals)
		fmt.Fprintf(w, "complete -o bashdefault -o default -F _%s_complete %s\n", root.Name, root.Name)
	case "zsh":
		fmt.Fprintf(w, "#compdef %s\n# zsh completion for %s, written by `%s completion zsh` from its commands and flags\n# (bash's, through zsh's bashcompinit). Load it with: source <(%s completion zsh)\n", root.Name, root.Name, root.Name, root.Name)
		io.WriteString(w, "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBashFuncs(w, root, vals)
		fmt.Fprintf(w, "complete -o bashdefault -o default -F _%s_complete %s\n", root.Name, root.Name)
	case "fish":
		writeFish(w, root, vals)
	default:
		return Usagef("no completion for %q;%s use bash, zsh or fish", shell, registry.Suggest(shell, []string{"bash", "zsh", "fish"}))
	}
	return nil
}

func writeBashFuncs(w io.Writer, root *Command, vals Values) {
	p := "_" + root.Name
	ns := tree(root)
	cases := func(fn string, get func(node) []string) {
		fmt.Fprintf(w, "%s_%s() {\n    case \"$1\" in\n", p, fn)
		for _, n := range ns {
			if ws := words(get(n)); ws != "" {
				fmt.Fprintf(w, "    %q) echo %q ;;\n", n.path, ws)
			}
		}
		io.WriteString(w, "    esac\n}\n")
	}
	cases("subs", func(n node) []string { return n.subs })
	cases("flags", func(n node) []string { return n.flags })
	cases("valued", func(n node) []string { return n.valued })
	names, vw := vals.sorted()
	fmt.Fprintf(w, "%s_values() {\n    case \"$1\" in\n", p)
	for _, k := range names {
		fmt.Fprintf(w, "    %s) echo %q ;;\n", k, vw[k])
	}
	io.WriteString(w, "    esac\n}\n")
	fmt.Fprintf(w, `%[1]s_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local path="" i w skip=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if ((skip)); then skip=0; continue; fi
        if [[ $w == -* ]]; then
            [[ $w == -[!-]* ]] && w="-$w"
            [[ $w == *=* ]] && continue
            [[ " $(%[1]s_valued "$path") " == *" $w "* ]] && skip=1
            continue
        fi
        [[ " $(%[1]s_subs "$path") " == *" $w "* ]] && path="${path:+$path }$w"
    done
    [[ $prev == -[!-]* ]] && prev="-$prev"
    if [[ $cur != -* && " $(%[1]s_valued "$path") " == *" $prev "* ]]; then
        local vals pre=""
        vals=$(%[1]s_values "${prev#--}")
        if [[ -n $vals ]]; then
            [[ $cur == *,* ]] && pre="${cur%%,*},"
            COMPREPLY=($(compgen -P "$pre" -W "$vals" -- "${cur##*,}"))
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(%[1]s_flags "$path")" -- "$cur"))
        return 0
    fi
    local subs
    subs=$(%[1]s_subs "$path")
    [[ -n $subs ]] && COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    return 0
}
`, p)
}

// fishQuote quotes a description for fish, on one line, cut at 80
// characters.
func fishQuote(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return fishArg(s)
}

// fishArg quotes s for fish whole.
func fishArg(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, root *Command, vals Values) {
	r := root.Name
	ns := tree(root)
	fmt.Fprintf(w, "# fish completion for %s, written by `%s completion fish` from its commands and flags.\n# Load it with: %s completion fish | source\n", r, r, r)
	fmt.Fprintf(w, "function __%s_subs\n    switch \"$argv\"\n", r)
	for _, n := range ns {
		if len(n.subs) > 0 {
			fmt.Fprintf(w, "        case %s\n            printf '%%s\\n' %s\n", fishQuote(n.path), words(n.subs))
		}
	}
	io.WriteString(w, "    end\nend\n")
	fmt.Fprintf(w, `function __%[1]s_path
    set -l path
    for word in (commandline -opc)[2..-1]
        if string match -q -- '-*' $word
            continue
        end
        if contains -- $word (__%[1]s_subs "$path")
            set path $path $word
        end
    end
    echo "$path"
end
function __%[1]s_at
    set -l here (__%[1]s_path)
    test "$here" = "$argv"
end
function __%[1]s_list
    # a comma-separated list: complete its last item, keep the ones before
    set -l pre (string match -r -- '^.*,' (commandline -ct))
    for w in $argv
        printf '%%s%%s\n' "$pre" $w
    end
end
complete -c %[1]s -f
`, r)
	names, vw := vals.sorted()
	for _, n := range ns {
		at := fmt.Sprintf("__%s_at %s", r, n.path)
		cond := fishQuote(strings.TrimSpace(at))
		for _, s := range n.subs {
			fmt.Fprintf(w, "complete -c %s -n %s -a %s -d %s\n", r, cond, s, fishQuote(n.commandHelps[s]))
		}
		for _, f := range n.flags {
			name := strings.TrimPrefix(f, "--")
			opt := "-l" // --name; a one-letter flag is -f
			if len(name) == 1 {
				opt = "-s"
			}
			line := fmt.Sprintf("complete -c %s -n %s %s %s", r, cond, opt, name)
			if slices.Contains(n.valued, f) {
				line += " -r"
				if i, ok := slices.BinarySearch(names, name); ok {
					line += " -a " + fishArg("(__"+r+"_list "+vw[names[i]]+")")
				} else {
					line += " -F"
				}
			}
			if h := n.flagHelp[name]; h != "" {
				line += " -d " + fishQuote(h)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// CompletionCommand is `completion bash|zsh|fish`: it writes the script
// for root's tree on out.
func CompletionCommand(root *Command, vals Values, out io.Writer) *Command {
	return &Command{Name: "completion", Args: "bash|zsh|fish", Summary: "print a shell completion script: commands, flags and names (networks, workloads, suites, backends)",
		Long: "examples:\n  source <(cnperf completion bash)          # this shell; or write it to /etc/bash_completion.d/cnperf\n  cnperf completion zsh > \"${fpath[1]}/_cnperf\"\n  cnperf completion fish > ~/.config/fish/completions/cnperf.fish",
		Run: func(c *Ctx) error {
			args, err := c.Parse()
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return Usagef("name one shell: %s completion bash, zsh or fish", root.Name)
			}
			return WriteCompletion(out, args[0], root, vals)
		}}
}
