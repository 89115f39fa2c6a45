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
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Shipped is what `kustomize build config/default` installs: the
// manager's ServiceAccount and every object, by kind and name.
type Shipped struct {
	// Namespace and Name are the manager's ServiceAccount's.
	Namespace, Name string
	objects         map[string]*unstructured.Unstructured
}

// RenderShipped renders config/default with kustomize (KUSTOMIZE, else
// bin/kustomize; the test fails when it is not built).
func RenderShipped(t testing.TB) Shipped {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		kustomize = filepath.Join(root, "bin", "kustomize")
	}
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("%s not built (make kustomize, or make test): %v", kustomize, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", filepath.Join(root, "config", "default"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build config/default: %v\n%s", err, stderr.String())
	}
	s := Shipped{objects: map[string]*unstructured.Unstructured{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading kustomize build config/default: %v", err)
		}
		if obj.Object == nil {
			continue
		}
		s.objects[obj.GetKind()+"/"+obj.GetName()] = obj
		if obj.GetKind() == "ServiceAccount" {
			if s.Name != "" {
				t.Fatalf("kustomize build config/default has more than one ServiceAccount")
			}
			s.Namespace, s.Name = obj.GetNamespace(), obj.GetName()
		}
	}
	if s.Name == "" {
		t.Fatal("kustomize build config/default has no ServiceAccount")
	}
	return s
}

// Username is the manager's ServiceAccount as the API server names it.
func (s Shipped) Username() string {
	return "system:serviceaccount:" + s.Namespace + ":" + s.Name
}

// PolicyUsernameExpression is the matchCondition config/default's
// replacements write into the admission policies for the ServiceAccount.
func (s Shipped) PolicyUsernameExpression() string {
	return "request.userInfo.username == 'system:serviceaccount:' + '" + s.Namespace + "' + ':' + '" + s.Name + "'"
}

// Get returns the object kind/name (the test fails when there is none).
func (s Shipped) Get(t testing.TB, kind, name string) *unstructured.Unstructured {
	t.Helper()
	obj, ok := s.objects[kind+"/"+name]
	if !ok {
		t.Fatalf("kustomize build config/default has no %s %s", kind, name)
	}
	return obj
}
