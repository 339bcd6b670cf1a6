package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

func init() {
	register(verb{name: "completion", summary: "print a shell completion script (bash, zsh or fish)", run: runCompletion})
}

const completionUsage = "bash|zsh|fish\n\n" +
	"Prints a script that completes ssgen's verbs, their flags and file arguments in\n" +
	"that shell. Load it with:\n" +
	"  bash   source <(ssgen completion bash)     (or save it in /etc/bash_completion.d/ssgen)\n" +
	"  zsh    source <(ssgen completion zsh)      (or save it as _ssgen in a directory of $fpath)\n" +
	"  fish   ssgen completion fish | source      (or save it in ~/.config/fish/completions/ssgen.fish)\n" +
	"The script lists the flags of this ssgen build: print it again after an upgrade."

func runCompletion(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "completion", completionUsage)
	pos, help, err := interleavedArgs(fs, args)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want one shell: bash, zsh or fish (see ssgen completion --help)")
	}
	specs := verbSpecs(ctx)
	switch pos[0] {
	case "bash":
		writeBash(env.stdout, specs)
	case "zsh":
		writeZsh(env.stdout, specs)
	case "fish":
		writeFish(env.stdout, specs)
	default:
		return usageErrorf("unknown shell %q: want bash, zsh or fish", pos[0])
	}
	return nil
}

// verbSpec is what completion knows of a verb.
type verbSpec struct {
	name, summary string
	flags         []flagSpec
}

type flagSpec struct {
	name, usage string
	takesValue  bool // not a boolean flag
	file        bool // its value is a file or directory name
}

// verbSpecs reads every verb's flags by running it with --help, output
// discarded, and catching the flag set it makes.
func verbSpecs(ctx context.Context) []verbSpec {
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []verbSpec
	for _, n := range names {
		spec := verbSpec{name: n, summary: verbs[n].summary}
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		var sets []*flag.FlagSet
		env.onFlagSet = func(fs *flag.FlagSet) { sets = append(sets, fs) }
		_ = verbs[n].run(ctx, env, []string{"--help"})
		if n == "migrate" {
			// Its verbs' flags, together (once each).
			for _, sub := range migrateSubs {
				_ = verbs[n].run(ctx, env, []string{sub.name, "--help"})
			}
		}
		seen := map[string]bool{}
		// The flags are defined once the verb has parsed its arguments.
		for _, fs := range sets {
			fs.VisitAll(func(f *flag.Flag) {
				if seen[f.Name] {
					return
				}
				seen[f.Name] = true
				b, isBool := f.Value.(interface{ IsBoolFlag() bool })
				_, usage := flag.UnquoteUsage(f)
				fsp := flagSpec{name: f.Name, usage: firstLine(usage), takesValue: !isBool || !b.IsBoolFlag()}
				fsp.file = fsp.takesValue && fileFlag(f.Name)
				spec.flags = append(spec.flags, fsp)
			})
		}
		out = append(out, spec)
	}
	return out
}

// fileFlag tells the flags whose value is a path.
func fileFlag(name string) bool {
	switch name {
	case "schema", "file", "out", "o", "data-dir", "seed", "cpuprofile", "memprofile", "backup":
		return true
	}
	return strings.HasSuffix(name, "-file") || strings.HasPrefix(name, "tls-")
}

// verbNames lists the verbs, space-separated (plain words, no quoting
// needed).
func verbNames(specs []verbSpec) string {
	var b strings.Builder
	for i, v := range specs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.name)
	}
	return b.String()
}

func writeBash(w io.Writer, specs []verbSpec) {
	fmt.Fprintf(w, `# bash completion for ssgen (ssgen completion bash).
_ssgen() {
    local cur prev verb
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=( $(compgen -W "%s help --help --version" -- "$cur") )
        return
    fi
    verb="${COMP_WORDS[1]}"
    case "$verb" in
        help) COMPREPLY=( $(compgen -W "%s" -- "$cur") ); return ;;
        completion) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ); return ;;
    esac
    case "$verb $prev" in
`, verbNames(specs), verbNames(specs))
	for _, v := range specs {
		var files, values []string
		for _, f := range v.flags {
			switch {
			case f.file:
				files = append(files, "--"+f.name, "-"+f.name)
			case f.takesValue:
				values = append(values, "--"+f.name, "-"+f.name)
			}
		}
		if len(files) > 0 {
			fmt.Fprintf(w, "        \"%s \"%s) COMPREPLY=( $(compgen -f -- \"$cur\") ); return ;;\n", v.name, strings.Join(files, "|\""+v.name+" \""))
		}
		if len(values) > 0 {
			fmt.Fprintf(w, "        \"%s \"%s) COMPREPLY=(); return ;;\n", v.name, strings.Join(values, "|\""+v.name+" \""))
		}
	}
	fmt.Fprint(w, `    esac
    if [[ "$cur" == -* ]]; then
        case "$verb" in
`)
	for _, v := range specs {
		var flags []string
		for _, f := range v.flags {
			flags = append(flags, "--"+f.name)
		}
		fmt.Fprintf(w, "            %s) COMPREPLY=( $(compgen -W \"%s\" -- \"$cur\") ) ;;\n", v.name, strings.Join(append(flags, "--help"), " "))
	}
	fmt.Fprint(w, `        esac
        return
    fi
    COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _ssgen ssgen
`)
}

// zshQuote escapes a description for an _arguments or _describe spec.
func zshQuote(s string) string {
	r := strings.NewReplacer(`'`, `'\''`, `[`, `\[`, `]`, `\]`, `:`, `\:`)
	return r.Replace(s)
}

func writeZsh(w io.Writer, specs []verbSpec) {
	fmt.Fprint(w, `#compdef ssgen
# zsh completion for ssgen (ssgen completion zsh).
_ssgen() {
  local -a verbs
  verbs=(
`)
	for _, v := range specs {
		fmt.Fprintf(w, "    '%s:%s'\n", v.name, zshQuote(v.summary))
	}
	fmt.Fprint(w, `  )
  if (( CURRENT == 2 )); then
    _describe -t verbs 'ssgen verb' verbs
    return
  fi
  local verb=$words[2]
  shift words
  (( CURRENT-- ))
  case $verb in
    help) _describe -t verbs 'ssgen verb' verbs ;;
    completion) _values shell bash zsh fish ;;
`)
	for _, v := range specs {
		if v.name == "completion" {
			continue
		}
		fmt.Fprintf(w, "    %s)\n      _arguments \\\n", v.name)
		for _, f := range v.flags {
			spec := fmt.Sprintf("'--%s[%s]", f.name, zshQuote(f.usage))
			switch {
			case f.file:
				spec += ":" + f.name + ":_files'"
			case f.takesValue:
				spec += ":" + f.name + ": '"
			default:
				spec += "'"
			}
			fmt.Fprintf(w, "        %s \\\n", spec)
		}
		fmt.Fprint(w, "        '*:argument:_files' ;;\n")
	}
	fmt.Fprint(w, `  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _ssgen "$@"
else
  compdef _ssgen ssgen
fi
`)
}

// fishQuote quotes a string for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, specs []verbSpec) {
	fmt.Fprint(w, "# fish completion for ssgen (ssgen completion fish).\ncomplete -c ssgen -f\n")
	fmt.Fprintf(w, "complete -c ssgen -n __fish_use_subcommand -a help -d %s\n", fishQuote("describe a verb"))
	fmt.Fprintf(w, "complete -c ssgen -n __fish_use_subcommand -l version -d %s\n", fishQuote("print the version"))
	for _, v := range specs {
		fmt.Fprintf(w, "complete -c ssgen -n __fish_use_subcommand -a %s -d %s\n", v.name, fishQuote(v.summary))
	}
	fmt.Fprintf(w, "complete -c ssgen -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(verbNames(specs)))
	fmt.Fprint(w, "complete -c ssgen -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	for _, v := range specs {
		cond := fishQuote("__fish_seen_subcommand_from " + v.name)
		for _, f := range v.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-o " + f.name // Go's flags read -o as the long form
			}
			switch {
			case f.file:
				opt += " -r -F"
			case f.takesValue:
				opt += " -r"
			}
			fmt.Fprintf(w, "complete -c ssgen -n %s %s -d %s\n", cond, opt, fishQuote(f.usage))
		}
		switch v.name {
		case "help", "completion":
		default:
			fmt.Fprintf(w, "complete -c ssgen -n %s -F\n", cond)
		}
	}
}
