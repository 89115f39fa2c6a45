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

package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Tool returns the path of a tool of root's bin/ (kustomize, helm,
// promtool) that the environment variable env names when set (make test
// sets it), and fails the test when it is not built.
func Tool(t testing.TB, root, env, name string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path = filepath.Join(root, "bin", name)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s not built (make %s, or make test): %v", path, name, err)
	}
	return path
}
