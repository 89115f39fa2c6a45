package apply_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"sunstrider.cn/operator/internal/testutil"
)

// controlPlane is the envtest API server the write tests share (each
// works in a namespace of its own): started by the first that needs it,
// stopped by TestMain. A start costs a loaded 2-core machine several
// seconds.
var controlPlane struct {
	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env := controlPlane.env; env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// apiServer returns an admin client of the shared envtest API server
// (started once, on first use) that knows the built-in kinds. No CRDs:
// the children are built-in kinds.
func apiServer(t *testing.T) client.WithWatch {
	t.Helper()
	controlPlane.once.Do(func() {
		env, cfg, err := startEnvironment()
		controlPlane.env, controlPlane.cfg, controlPlane.err = env, cfg, err
	})
	if controlPlane.err != nil {
		t.Fatal(controlPlane.err)
	}
	return newClient(t, controlPlane.cfg)
}

// ownAPIServer starts an envtest API server for t alone, stopped at its
// end. TestDriftedAgreesWithAPIServer has one: run on the shared one
// after TestWriteCreates, its restores twice in a row met a node port
// still allocated at the end of their 30 s poll (under load 15 to 18),
// never on a fresh one.
func ownAPIServer(t *testing.T) client.WithWatch {
	t.Helper()
	env, cfg, err := startEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return newClient(t, cfg)
}

// startEnvironment starts an envtest API server without CRDs.
func startEnvironment() (*envtest.Environment, *rest.Config, error) {
	env, err := testutil.NewEnvironment()
	if err != nil {
		return nil, nil, err
	}
	env.CRDDirectoryPaths = nil
	cfg, err := testutil.Start(env)
	if err != nil {
		return nil, nil, err
	}
	return env, cfg, nil
}

// newClient is an admin client of cfg's API server that knows the
// built-in kinds.
func newClient(t *testing.T, cfg *rest.Config) client.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// patchVerb is the verb a request log records for a patch: "apply" for a
// server-side apply (the Applier sends most applies as raw patches, to
// take typed answers), else "patch".
func patchVerb(p client.Patch) string {
	if p.Type() == types.ApplyPatchType {
		return "apply"
	}
	return "patch"
}

// requestLog records, in order, what a test saw of its client's requests:
// their verbs, or the content types of their answers.
type requestLog struct {
	mu    sync.Mutex
	verbs []string
}

func (l *requestLog) record(verb string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.verbs = append(l.verbs, verb)
}

// taken returns what was recorded since the last call.
func (l *requestLog) taken() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	verbs := l.verbs
	l.verbs = nil
	return verbs
}
