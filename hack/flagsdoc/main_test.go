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

package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestParse parses what flag.PrintDefaults prints for each kind of flag.
func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.Bool("on", true, "A boolean, true by default.")
	fs.Bool("off", false, "A boolean, false by default.")
	fs.String("image", "registry/x:v1", "Image (env IMAGE).")
	fs.String("empty", "", "Empty by default.")
	fs.Duration("wait", time.Second, "A duration.")
	fs.Int("port", 9443, "A port | with a bar.")
	var out strings.Builder
	fs.SetOutput(&out)
	_, _ = io.WriteString(&out, "Usage of manager:\nIntro line.\n")
	fs.PrintDefaults()

	h, err := Parse(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Intro) != 2 || h.Intro[1] != "Intro line." {
		t.Errorf("intro = %q", h.Intro)
	}
	want := map[string]Flag{
		"empty": {Name: "empty", Type: "string", Usage: "Empty by default."},
		"image": {Name: "image", Type: "string", Default: `"registry/x:v1"`, Usage: "Image (env IMAGE)."},
		"off":   {Name: "off", Type: "bool", Default: "false", Usage: "A boolean, false by default."},
		"on":    {Name: "on", Type: "bool", Default: "true", Usage: "A boolean, true by default."},
		"port":  {Name: "port", Type: "int", Default: "9443", Usage: "A port | with a bar."},
		"wait":  {Name: "wait", Type: "duration", Default: "1s", Usage: "A duration."},
	}
	if len(h.Flags) != len(want) {
		t.Fatalf("flags = %+v", h.Flags)
	}
	for _, f := range h.Flags {
		if f != want[f.Name] {
			t.Errorf("flag %s = %+v, want %+v", f.Name, f, want[f.Name])
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for name, text := range map[string]string{
		"no flags":        "Usage of manager:\n",
		"usage first":     "Usage:\n    \tstray usage\n",
		"text after flag": "Usage:\n  -a string\n    \tA.\nsurprise\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(text); err == nil {
				t.Error("no error")
			}
		})
	}
}
