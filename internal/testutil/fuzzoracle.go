package testutil

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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// FuzzAPIServer is a fuzz target's oracle: a real API server (envtest: the
// CRDs of config/crd/bases, their schemas and CEL rules; no webhook
// installed), so a validator is never checked against its own rules. One
// control plane per test process, started at most once: lazily by the
// first fuzz input under plain `go test` (the seed corpus), before the
// tests under `go test -fuzz` (Main), so the fuzz workers (the same binary
// again, with the coordinator's environment) reach the coordinator's API
// server through the environment variable Env instead of each starting one.
// Under `make test` no package starts one: the oracles of every package
// share the control plane hack/fuzzapiserver starts beside go test, named
// in the file FuzzAPIServerFileEnv points to.
type FuzzAPIServer struct {
	// Env names the environment variable that hands the control plane to
	// the fuzz workers (one per package: FUZZ_APISERVER_<PACKAGE>).
	Env string
	// AddToScheme adds the package's API types.
	AddToScheme func(*runtime.Scheme) error

	once   sync.Once
	client client.Client
	err    error
	env    *envtest.Environment
}

// FuzzNamespace is the namespace the fuzz oracles dry-run objects in.
const FuzzNamespace = "ns"

// FuzzAPIServerFileEnv names the environment variable holding the path of
// a file that describes a control plane started outside the test process
// (hack/fuzzapiserver, which `make test` runs go test under): an oracle
// whose Env is unset waits for the file and uses that control plane. One
// control plane then serves the oracles of every package (each dry-runs
// only), instead of one started per package.
const FuzzAPIServerFileEnv = "FUZZ_APISERVER_FILE"

// fuzzAPIServerFileWait is how long an oracle waits for the file
// FuzzAPIServerFileEnv names: a control-plane start on a loaded machine.
const fuzzAPIServerFileWait = 3 * time.Minute

// sharedAPIServer is how the coordinator hands its API server to the
// fuzz workers (and hack/fuzzapiserver its own to the oracles, or why it
// has none: Error).
type sharedAPIServer struct {
	Host     string `json:"host,omitempty"`
	CAData   []byte `json:"caData,omitempty"`
	CertData []byte `json:"certData,omitempty"`
	KeyData  []byte `json:"keyData,omitempty"`
	Error    string `json:"error,omitempty"`
}

// StartFuzzControlPlane starts a control plane for fuzz oracles (the
// CRDs of config/crd/bases, NewEnvironment) and returns it with its
// description, the value an oracle's Env or the file FuzzAPIServerFileEnv
// names holds.
func StartFuzzControlPlane() (*envtest.Environment, []byte, error) {
	env, err := NewEnvironment()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := Start(env)
	if err != nil {
		return nil, nil, err
	}
	shared, err := json.Marshal(sharedAPIServer{
		Host: cfg.Host, CAData: cfg.CAData, CertData: cfg.CertData, KeyData: cfg.KeyData,
	})
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, shared, nil
}

// FuzzControlPlaneError is the description of a control plane that did
// not start: an oracle waiting for it fails with err.
func FuzzControlPlaneError(err error) []byte {
	data, _ := json.Marshal(sharedAPIServer{Error: err.Error()})
	return data
}

// waitForFuzzControlPlane waits until the file at path exists and returns
// its content.
func waitForFuzzControlPlane(path string) (string, error) {
	var data []byte
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, fuzzAPIServerFileWait, true,
		func(context.Context) (bool, error) {
			var err error
			data, err = os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				return false, nil
			}
			return err == nil, err
		})
	switch {
	case wait.Interrupted(err):
		return "", fmt.Errorf("%s: %s did not appear within %s (is hack/fuzzapiserver running?)",
			FuzzAPIServerFileEnv, path, fuzzAPIServerFileWait)
	case err != nil:
		return "", fmt.Errorf("%s: %w", FuzzAPIServerFileEnv, err)
	}
	return string(data), nil
}

// Main is the package's TestMain: under -fuzz the control plane starts
// before the tests (the coordinator's, shared with its workers); it stops
// after them. It returns the exit code for os.Exit.
func (f *FuzzAPIServer) Main(m *testing.M) int {
	flag.Parse()
	if fz := flag.Lookup("test.fuzz"); fz != nil && fz.Value.String() != "" && os.Getenv(f.Env) == "" {
		f.start()
		if f.err != nil {
			fmt.Fprintln(os.Stderr, f.err)
			return 1
		}
	}
	code := m.Run()
	if f.env != nil {
		if err := f.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	return code
}

// Client returns a client of the control plane, started (or reached) once.
func (f *FuzzAPIServer) Client(t *testing.T) client.Client {
	t.Helper()
	f.start()
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.client
}

func (f *FuzzAPIServer) start() {
	f.once.Do(func() { f.client, f.err = f.connect() })
}

// connect reaches the control plane Env names, or starts one and names it
// in Env; it makes FuzzNamespace.
func (f *FuzzAPIServer) connect() (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := f.AddToScheme(scheme); err != nil {
		return nil, err
	}
	shared := os.Getenv(f.Env)
	if path := os.Getenv(FuzzAPIServerFileEnv); shared == "" && path != "" {
		var err error
		if shared, err = waitForFuzzControlPlane(path); err != nil {
			return nil, err
		}
	}
	if shared == "" {
		env, data, err := StartFuzzControlPlane()
		if err != nil {
			return nil, err
		}
		f.env, shared = env, string(data)
	}
	var s sharedAPIServer
	if err := json.Unmarshal([]byte(shared), &s); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Env, err)
	}
	if s.Error != "" {
		return nil, fmt.Errorf("the shared fuzz control plane did not start: %s", s.Error)
	}
	// The fuzz workers (under -fuzz) reach the same control plane.
	if err := os.Setenv(f.Env, shared); err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: s.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: s.CAData, CertData: s.CertData, KeyData: s.KeyData,
	}}
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FuzzNamespace}}
	if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", FuzzNamespace, err)
	}
	return c, nil
}

// DryRunCreate asks the API server whether it would create obj (a copy:
// the server's answer is not written back). It returns nil or the
// server's Invalid error; any other error fails the test (the oracle
// could not answer).
func (f *FuzzAPIServer) DryRunCreate(t *testing.T, obj client.Object) error {
	t.Helper()
	err := f.Client(t).Create(context.Background(), obj.DeepCopyObject().(client.Object), client.DryRunAll)
	if err != nil && !apierrors.IsInvalid(err) {
		t.Fatalf("dry-run create of %T: %v (the API server gave no verdict)", obj, err)
	}
	return err
}

// InvalidFields returns the field paths an Invalid error names (its
// causes); the test fails when err is not Invalid or names no field.
func InvalidFields(t *testing.T, who string, err error) []string {
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

// ExpectFieldsIn fails the test unless the refusal err names fields of
// obj, as the JSON the API server would receive: each path must lead to a
// value, or, for a required value, to the object that should hold it.
func ExpectFieldsIn(t *testing.T, err error, obj any) {
	t.Helper()
	data, jerr := json.Marshal(obj)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var doc map[string]any
	if jerr := json.Unmarshal(data, &doc); jerr != nil {
		t.Fatal(jerr)
	}
	InvalidFields(t, "the validator", err)
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

// ViaJSON returns obj as the webhook receives it: encoded and decoded
// (strings not UTF-8 arrive with U+FFFD, as the API server passes them).
func ViaJSON[T any](t *testing.T, obj *T) *T {
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
