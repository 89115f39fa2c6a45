/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command flagsdoc writes docs/reference/flags.md from the help the built
// manager prints (`manager --help`, `manager init-config --help`,
// `manager check-release --help`), so the reference is the binary's own
// text. The manager runs with an empty environment: flags whose default
// comes from an environment variable (POD_NAMESPACE, GUESTBOOK_IMAGE,
// ENABLE_WEBHOOKS) show their built-in default, never this machine's
// values.
//
//	go run ./hack/flagsdoc -manager bin/manager -out docs/reference/flags.md
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

func main() {
	manager := flag.String("manager", "bin/manager", "The manager binary to run.")
	out := flag.String("out", "docs/reference/flags.md", "The Markdown file to write.")
	flag.Parse()
	if err := run(*manager, *out); err != nil {
		fmt.Fprintln(os.Stderr, "flagsdoc:", err)
		os.Exit(1)
	}
}

func run(manager, out string) error {
	mainHelp, err := help(manager)
	if err != nil {
		return err
	}
	subHelps := make([]string, len(subcommands))
	for i, sub := range subcommands {
		if subHelps[i], err = help(manager, sub); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	if err := render(&b, mainHelp, subHelps...); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// help runs `manager [args...] --help` with an empty environment and
// "manager" as its name, and returns what it printed.
func help(manager string, args ...string) (string, error) {
	cmd := exec.Command(manager)
	cmd.Args = append(append([]string{"manager"}, args...), "--help")
	cmd.Env = []string{}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	// flag.ExitOnError exits 0 on --help, flag.ContinueOnError callers 2.
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 2) {
		return "", fmt.Errorf("%s %s --help: %w\n%s", manager, strings.Join(args, " "), err, buf.String())
	}
	if !strings.HasPrefix(buf.String(), "Usage") {
		return "", fmt.Errorf("%s %s --help printed no usage:\n%s", manager, strings.Join(args, " "), buf.String())
	}
	return buf.String(), nil
}

// Flag is one flag as flag.PrintDefaults prints it.
type Flag struct {
	Name, Type, Default, Usage string
}

// Help is a parsed usage text: the lines before the flags, then the flags.
type Help struct {
	Intro []string
	Flags []Flag
}

var defaultRe = regexp.MustCompile(` \(default (.*)\)$`)

// Parse reads flag.PrintDefaults' format: "  -name type" (type omitted for
// booleans), then the usage on lines indented "    \t", the last ending in
// " (default x)" when the default is not the zero value.
func Parse(text string) (Help, error) {
	var h Help
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "  -"):
			name, typ, _ := strings.Cut(strings.TrimPrefix(line, "  -"), " ")
			h.Flags = append(h.Flags, Flag{Name: name, Type: typ})
		case strings.HasPrefix(line, "    \t"):
			if len(h.Flags) == 0 {
				return h, fmt.Errorf("usage line before any flag: %q", line)
			}
			f := &h.Flags[len(h.Flags)-1]
			f.Usage = strings.TrimSpace(f.Usage + " " + strings.TrimPrefix(line, "    \t"))
		case len(h.Flags) == 0:
			h.Intro = append(h.Intro, line)
		case strings.TrimSpace(line) != "":
			return h, fmt.Errorf("unexpected line after the flags: %q", line)
		}
	}
	for i := range h.Flags {
		f := &h.Flags[i]
		if m := defaultRe.FindStringSubmatch(f.Usage); m != nil {
			f.Default = m[1]
			f.Usage = strings.TrimSuffix(f.Usage, m[0])
		}
		if f.Type == "" {
			f.Type = "bool"
			if f.Default == "" {
				f.Default = "false"
			}
		}
	}
	if len(h.Flags) == 0 {
		return h, errors.New("no flags in the usage text")
	}
	return h, nil
}

// subcommands are the manager's subcommands, each with a section after the
// manager's own flags: the init container's and the `helm test` hook's.
var subcommands = []string{"init-config", "check-release"}

// render writes the page from `manager --help` and the help of each of
// subcommands, in their order.
func render(b *bytes.Buffer, mainHelp string, subHelps ...string) error {
	if len(subHelps) != len(subcommands) {
		return fmt.Errorf("%d subcommand help texts for %d subcommands", len(subHelps), len(subcommands))
	}
	m, err := Parse(mainHelp)
	if err != nil {
		return fmt.Errorf("manager --help: %w", err)
	}
	subs := make([]Help, len(subHelps))
	for i, text := range subHelps {
		if subs[i], err = Parse(text); err != nil {
			return fmt.Errorf("manager %s --help: %w", subcommands[i], err)
		}
	}
	b.WriteString(`<!-- Generated by hack/flagsdoc from the manager's --help; do not edit. Run make docs. -->

# Flags and configuration reference

The operator is one binary, ` + "`/manager`" + ` in its image. Its flags are set in
the Deployment (` + "`config/manager/manager.yaml`" + `, the Helm chart's values, the
OLM bundle's CSV). Most of what an administrator changes at run time lives
in the OperatorConfiguration ` + "`default`" + ` instead: its fields take precedence over
the flags of the same purpose, and a field left unset falls back to the
flag. Its fields are in the [API reference](api.md#config-sunstrider-cn-v1alpha1-operatorconfiguration);
what applies at once, what restarts the operator and the precedence are in
[docs/configuration.md](../configuration.md).

Flags are written ` + "`--name=value`" + ` (Go's flag package also accepts ` + "`-name`" + `).
The Default column is the built-in default. Where the Environment column
names a variable, that variable, when set, replaces the built-in default
(the Deployment sets ` + "`POD_NAMESPACE`" + ` from the Pod's namespace). The
` + "`--zap-*`" + ` flags without a default take production mode's (see
` + "`--zap-devel`" + `): JSON logs at info level.

`)
	section(b, "manager", "`manager [flags]`", m)
	for i, sub := range subcommands {
		section(b, "manager "+sub, "`manager "+sub+" [flags]`", subs[i])
	}
	return nil
}

var envRe = regexp.MustCompile(`\(env ([A-Z_]+)[ )=]`)

func section(b *bytes.Buffer, title, synopsis string, h Help) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n", title, synopsis)
	for _, line := range h.Intro {
		if strings.HasPrefix(line, "Usage") || strings.TrimSpace(line) == "" {
			continue
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n| Flag | Type | Default | Environment | Description |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range h.Flags {
		env := ""
		if m := envRe.FindStringSubmatch(f.Usage); m != nil {
			env = "`" + m[1] + "`"
		}
		def := ""
		if f.Default != "" {
			def = "`" + strings.Trim(f.Default, `"`) + "`"
			if f.Default == `""` {
				def = ""
			}
		}
		fmt.Fprintf(b, "| `--%s` | %s | %s | %s | %s |\n", f.Name, cell(f.Type), def, env, cell(f.Usage))
	}
	b.WriteString("\n")
}

// cell escapes what would end a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
