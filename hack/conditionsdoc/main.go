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

// Command conditionsdoc renders the tables of docs/conditions.md from the
// code that decides what they say: the one outcome policy
// (controller.PolicyTable) and each kind's reasons (ReadyReasons, whose
// classes set Reconciling or Stalled). Each table sits between the markers
// <!-- BEGIN GENERATED: name --> and <!-- END GENERATED: name --> of the
// document; the prose around them is written by hand.
//
//	go run ./hack/conditionsdoc -in docs/conditions.md -out docs/conditions.md
//
// make docs runs it; make verify renders into a temporary file and fails
// when docs/conditions.md differs.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/controller/config"
	"sunstrider.cn/operator/internal/controller/example"
	"sunstrider.cn/operator/internal/controller/poc"
	"sunstrider.cn/operator/internal/controller/webapp"
)

// tables are the generated tables, by marker name.
func tables() map[string]string {
	return map[string]string{
		"policy":                controllers.PolicyTable(),
		"Application":           apps.ReadyReasons.Table(),
		"MyCustomResource":      poc.ReadyReasons.Table(),
		"Guestbook":             webapp.ReadyReasons.Table(),
		"Drink":                 example.ReadyReasons.Table(),
		"OperatorConfiguration": config.ReadyReasons.Table(),
	}
}

var marker = regexp.MustCompile(`(?s)(<!-- BEGIN GENERATED: (\w+) -->\n).*?(<!-- END GENERATED: (\w+) -->)`)

// render replaces every marked table of doc, and fails on a marker it has
// no table for, or a table no marker holds.
func render(doc string, tables map[string]string) (string, error) {
	used := map[string]bool{}
	var err error
	out := marker.ReplaceAllStringFunc(doc, func(m string) string {
		sub := marker.FindStringSubmatch(m)
		name := sub[2]
		if sub[4] != name {
			err = fmt.Errorf("marker %s ends as %s", name, sub[4])
			return m
		}
		table, ok := tables[name]
		if !ok {
			err = fmt.Errorf("no table is generated for marker %s", name)
			return m
		}
		used[name] = true
		return sub[1] + "\n" + table + "\n" + sub[3]
	})
	if err != nil {
		return "", err
	}
	for name := range tables {
		if !used[name] {
			return "", fmt.Errorf("the document has no marker for table %s", name)
		}
	}
	return out, nil
}

func main() {
	in := flag.String("in", "docs/conditions.md", "the document to read")
	out := flag.String("out", "", "where to write it (default: -in)")
	flag.Parse()
	if *out == "" {
		*out = *in
	}
	data, err := os.ReadFile(*in)
	if err == nil {
		var doc string
		if doc, err = render(string(data), tables()); err == nil {
			err = os.WriteFile(*out, []byte(strings.TrimRight(doc, "\n")+"\n"), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conditionsdoc:", err)
		os.Exit(1)
	}
}
