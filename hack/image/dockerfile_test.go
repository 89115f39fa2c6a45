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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pinned is an image reference with a digest: what a registry serves under
// it cannot change, unlike a tag's.
var pinned = regexp.MustCompile(`^[a-z0-9][^\s@$]*@sha256:[0-9a-f]{64}$`)

// baseImages checks the FROM lines of a Dockerfile: each must be scratch,
// an image pinned by digest, or a stage named earlier in the file. It
// returns how many FROM lines there are and what is wrong with any.
// Variables are refused: what they expand to is the build's to say.
func baseImages(dockerfile string) (froms int, problems []string) {
	var stages []string
	// An instruction goes on over the lines that end in a backslash; i is
	// the line it starts on.
	lines := strings.Split(dockerfile, "\n")
	for i := 0; i < len(lines); i++ {
		start, line := i, lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") || !strings.EqualFold(fields[0], "FROM") {
			continue
		}
		froms++
		args := slices.DeleteFunc(fields[1:], func(f string) bool { return strings.HasPrefix(f, "--") })
		if len(args) == 0 {
			problems = append(problems, fmt.Sprintf("line %d: FROM without an image", start+1))
			continue
		}
		image := args[0]
		switch {
		case strings.Contains(image, "$"):
			problems = append(problems, fmt.Sprintf("line %d: FROM %s: a variable, which cannot be checked "+
				"to be pinned; write the image@sha256:<digest> in the FROM line", start+1, image))
		case image == "scratch", pinned.MatchString(image), slices.Contains(stages, strings.ToLower(image)):
		default:
			problems = append(problems, fmt.Sprintf("line %d: FROM %s: not pinned by digest "+
				"(image@sha256:<64 hex digits>), nor scratch, nor an earlier stage", start+1, image))
		}
		if len(args) == 3 && strings.EqualFold(args[1], "AS") {
			stages = append(stages, strings.ToLower(args[2]))
		}
	}
	return froms, problems
}

// TestBaseImagesPinned: every image the repository's Dockerfiles build
// from is scratch or pinned by digest, so a base image by tag (which the
// registry can point at other content at any time) fails here. A
// Dockerfile without any FROM line fails too: the check must have checked
// something.
func TestBaseImagesPinned(t *testing.T) {
	for _, name := range []string{"Dockerfile", "bundle.Dockerfile"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", name))
			if err != nil {
				t.Fatal(err)
			}
			froms, problems := baseImages(string(data))
			if froms == 0 {
				t.Errorf("%s has no FROM line: nothing checked", name)
			}
			for _, p := range problems {
				t.Errorf("%s %s", name, p)
			}
		})
	}
}

// TestBaseImagesCheck: the check itself, on what it must refuse and accept.
func TestBaseImagesCheck(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		name       string
		dockerfile string
		froms      int
		ok         bool
	}{
		{"scratch", "FROM scratch\nADD rootfs.tar /\n", 1, true},
		{"empty", "", 0, true},
		{"comments only", "# FROM golang:1.26\n", 0, true},
		{"tag", "FROM golang:1.26.11\n", 1, false},
		{"no tag", "from gcr.io/distroless/static\n", 1, false},
		{"digest", "FROM gcr.io/distroless/static@" + digest + "\n", 1, true},
		{"tag and digest", "FROM golang:1.26.11@" + digest + " AS builder\n", 1, true},
		{"short digest", "FROM golang@sha256:0123\n", 1, false},
		{"platform flag", "FROM --platform=${BUILDPLATFORM} golang:1.26.11 AS builder\n", 1, false},
		{"platform flag, pinned", "FROM --platform=${BUILDPLATFORM} golang@" + digest + " AS builder\n", 1, true},
		{"variable", "ARG BASE=golang@" + digest + "\nFROM ${BASE}\n", 1, false},
		{"earlier stage", "FROM golang@" + digest + " AS Builder\nFROM builder\n", 2, true},
		{"later stage", "FROM builder\nFROM golang@" + digest + " AS builder\n", 2, false},
		{"second base by tag", "FROM scratch AS a\nFROM \\\n  alpine:3\n", 2, false},
		{"no image", "FROM\n", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			froms, problems := baseImages(tc.dockerfile)
			if froms != tc.froms || (len(problems) == 0) != tc.ok {
				t.Errorf("%d FROM lines, problems %q; want %d, ok %v", froms, problems, tc.froms, tc.ok)
			}
		})
	}
}
