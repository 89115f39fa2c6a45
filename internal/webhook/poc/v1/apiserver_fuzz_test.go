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

package v1

// The fuzz target's oracle is a real API server (envtest: the CRDs of
// config/crd/bases, their schemas and CEL rules; no webhook installed), so
// the validator is never checked against its own rules. One control plane
// per test process, started at most once: lazily by the first fuzz input
// under plain `go test` (the seed corpus), before the tests under
// `go test -fuzz`, so the fuzz workers (this binary again, with the
// coordinator's environment) reach the coordinator's API server through
// FUZZ_APISERVER_POC instead of each starting one.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// fuzzAPIServerEnv carries the coordinator's API server (fuzzAPIServer as
// JSON) to the fuzz workers.
const fuzzAPIServerEnv = "FUZZ_APISERVER_POC"

// fuzzNamespace holds the namespaced objects the oracle dry-runs.
const fuzzNamespace = "ns"

// fuzzAPIServer is how a process reaches the oracle's API server.
type fuzzAPIServer struct {
	Host     string `json:"host"`
	CAData   []byte `json:"caData"`
	CertData []byte `json:"certData"`
	KeyData  []byte `json:"keyData"`
}

var (
	apiServerOnce   sync.Once
	apiServerClient client.Client
	apiServerErr    error
	apiServerEnv    *envtest.Environment
)

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" && os.Getenv(fuzzAPIServerEnv) == "" {
		// The fuzz coordinator: up before the workers start.
		startAPIServer()
		if apiServerErr != nil {
			fmt.Fprintln(os.Stderr, apiServerErr)
			os.Exit(1)
		}
	}
	code := m.Run()
	if apiServerEnv != nil {
		if err := apiServerEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// apiServer returns a client of the oracle's API server, failing the test
// (not skipping it) when the control plane cannot start.
func apiServer(t *testing.T) client.Client {
	t.Helper()
	startAPIServer()
	if apiServerErr != nil {
		t.Fatal(apiServerErr)
	}
	return apiServerClient
}

func startAPIServer() {
	apiServerOnce.Do(func() { apiServerClient, apiServerErr = connectAPIServer() })
}

func connectAPIServer() (client.Client, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(pocv1.AddToScheme(scheme))
	var cfg *rest.Config
	if shared := os.Getenv(fuzzAPIServerEnv); shared != "" {
		var s fuzzAPIServer
		if err := json.Unmarshal([]byte(shared), &s); err != nil {
			return nil, fmt.Errorf("%s: %w", fuzzAPIServerEnv, err)
		}
		cfg = &rest.Config{Host: s.Host, TLSClientConfig: rest.TLSClientConfig{
			CAData: s.CAData, CertData: s.CertData, KeyData: s.KeyData,
		}}
	} else {
		env, err := testutil.NewEnvironment()
		if err != nil {
			return nil, err
		}
		if cfg, err = testutil.Start(env); err != nil {
			return nil, err
		}
		apiServerEnv = env
		shared, err := json.Marshal(fuzzAPIServer{
			Host: cfg.Host, CAData: cfg.CAData, CertData: cfg.CertData, KeyData: cfg.KeyData,
		})
		if err != nil {
			return nil, err
		}
		if err := os.Setenv(fuzzAPIServerEnv, string(shared)); err != nil {
			return nil, err
		}
	}
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}
	if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", fuzzNamespace, err)
	}
	return c, nil
}

// dryRunCreate asks the API server whether it would create obj (a copy:
// the server's answer is not written back). It returns nil or the
// server's Invalid error; any other error fails the test (the oracle
// could not answer).
func dryRunCreate(t *testing.T, obj client.Object) error {
	t.Helper()
	err := apiServer(t).Create(context.Background(), obj.DeepCopyObject().(client.Object), client.DryRunAll)
	if err != nil && !apierrors.IsInvalid(err) {
		t.Fatalf("dry-run create of %T: %v (the API server gave no verdict)", obj, err)
	}
	return err
}

// invalidFields returns the field paths an Invalid error names (its
// causes); the test fails when err is not Invalid or names no field.
func invalidFields(t *testing.T, who string, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("%s refused with %v, not an Invalid error with causes", who, err)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if c.Field == "" {
			t.Fatalf("%s refused with a cause naming no field: %+v (in %v)", who, c, err)
		}
		fields = append(fields, c.Field)
	}
	if len(fields) == 0 {
		t.Fatalf("%s refused with %v, naming no field", who, err)
	}
	return fields
}

// expectFieldsIn fails the test unless the refusal err names fields of
// obj, as the JSON the API server would receive: each path must lead to a
// value, or, for a required value, to the object that should hold it.
func expectFieldsIn(t *testing.T, err error, obj any) {
	t.Helper()
	data, jerr := json.Marshal(obj)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var doc map[string]any
	if jerr := json.Unmarshal(data, &doc); jerr != nil {
		t.Fatal(jerr)
	}
	invalidFields(t, "the validator", err)
	var status apierrors.APIStatus
	errors.As(err, &status)
	for _, c := range status.Status().Details.Causes {
		path := c.Field
		if c.Type == metav1.CauseTypeFieldValueRequired {
			path = parentPath(path)
		}
		if !pathExists(doc, path) {
			t.Fatalf("the validator's refusal names %s (%s), which the input does not hold:\n%v\ninput: %s",
				c.Field, c.Type, err, data)
		}
	}
}

// parentPath is path without its last element (a.b[0].c: a.b[0]).
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndex(path, "["); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}

// pathExists tells whether path (a field.Path: a.b[0].c, m[key]) leads to
// a value in doc. Map keys are matched against doc's own keys, so keys
// holding dots or brackets resolve too.
func pathExists(doc any, path string) bool {
	if path == "" {
		return true
	}
	switch v := doc.(type) {
	case map[string]any:
		remaining, bracket := strings.CutPrefix(path, "[")
		if !bracket {
			remaining = strings.TrimPrefix(path, ".")
		}
		for key, child := range v {
			after, ok := strings.CutPrefix(remaining, key)
			if !ok {
				continue
			}
			if bracket {
				if after, ok = strings.CutPrefix(after, "]"); !ok {
					continue
				}
			}
			if (after == "" || after[0] == '.' || after[0] == '[') && pathExists(child, after) {
				return true
			}
		}
	case []any:
		index, after, ok := strings.Cut(strings.TrimPrefix(path, "["), "]")
		if !ok || !strings.HasPrefix(path, "[") {
			return false
		}
		i, err := strconv.Atoi(index)
		return err == nil && i >= 0 && i < len(v) && pathExists(v[i], after)
	}
	return false
}

// viaJSON returns obj as the webhook receives it: encoded and decoded
// (strings not UTF-8 arrive with U+FFFD, as the API server passes them).
func viaJSON[T any](t *testing.T, obj *T) *T {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}
