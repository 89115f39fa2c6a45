package apply_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/testutil"
)

// apiServer starts an envtest API server for t, stopped at its end, and
// returns an admin client of the built-in kinds. No CRDs: the children are
// built-in kinds.
func apiServer(t *testing.T) client.WithWatch {
	t.Helper()
	env, err := testutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	env.CRDDirectoryPaths = nil
	cfg, err := testutil.Start(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
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
