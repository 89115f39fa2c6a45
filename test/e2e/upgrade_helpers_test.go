//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// The previous release, when hack/previous-release does not name it.
const (
	fallbackPreviousVersion = "0.1.0"
	fallbackPreviousCommit  = "debdbfc88e6f66c021cffc1c9235d56e3ee2d54f"
)

// release is an operator version built from this repository's history:
// its manager binary and its installer (`kustomize build config/default`
// of its tree, as `make build-installer` renders it).
type release struct {
	version, commit    string
	manager, installer string
}

// previousRelease returns the previous release named by
// hack/previous-release (`version=` and `commit=` lines; the constants
// above when the file is absent), built from git history into
// bin/previous-release/<commit>/ once: reruns reuse it.
func previousRelease(t *testing.T) release {
	t.Helper()
	r := release{version: fallbackPreviousVersion, commit: fallbackPreviousCommit}
	if data, err := os.ReadFile(filepath.Join(root, "hack", "previous-release")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			switch {
			case !ok:
			case key == "version":
				r.version = strings.TrimSpace(value)
			case key == "commit":
				r.commit = strings.TrimSpace(value)
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "bin", "previous-release", r.commit)
	r.manager, r.installer = filepath.Join(dir, "manager"), filepath.Join(dir, "install.yaml")
	if fileExists(r.manager) && fileExists(r.installer) {
		return r
	}

	if out, err := sh(t, nil, "git", "cat-file", "-e", r.commit+"^{commit}"); err != nil {
		t.Fatalf("the previous release %s is commit %s, which this clone does not have (a shallow clone?): "+
			"fetch the history with `git fetch --unshallow` (or `git fetch origin %s`) and run again\n%s",
			r.version, r.commit, r.commit, out)
	}
	src := t.TempDir()
	mustSh(t, nil, "sh", "-c", fmt.Sprintf("git archive %s | tar -x -C %q", r.commit, src))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	build := exec.Command("go", "build", "-o", r.manager+".tmp", "./cmd")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s (%s): %v\n%s", r.version, r.commit, err, out)
	}
	installer := mustSh(t, nil, kustomize, "build", filepath.Join(src, "config", "default"))
	if err := os.WriteFile(r.installer, []byte(installer), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.manager+".tmp", r.manager); err != nil {
		t.Fatal(err)
	}
	t.Logf("built release %s (%s) into %s in %s", r.version, r.commit, dir, time.Since(start).Round(time.Second))
	return r
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// applyInstaller applies an installer as `kubectl apply --server-side
// --force-conflicts -f install.yaml` does, with the webhook client
// configurations pointed at the local operator process (hack/devconfig:
// kwok runs no container, the suite's operator runs on this machine).
func applyInstaller(t *testing.T, installer string) {
	t.Helper()
	redirected := mustSh(t, []byte(installer), "go", "run", "./hack/devconfig", "-base",
		fmt.Sprintf("https://localhost:%d", webhookPort))
	mustSh(t, []byte(redirected), kubectl, "apply", "--server-side", "--force-conflicts", "-f", "-")
}

// startRelease runs binary as the suite's operator process does
// (startOperator's flags, ports and kubeconfig) but with a certificate
// directory of its own, empty as a new Pod's, logging to logPath, and
// waits until it is ready. exited is closed once it has ended.
func startRelease(t *testing.T, binary, kubeconfig, certDir, logPath string) (cmd *exec.Cmd, exited <-chan struct{}) {
	t.Helper()
	if err := os.RemoveAll(certDir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary,
		"--operator-namespace="+operatorNamespace,
		"--webhook-extra-dns-names=localhost",
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		"--webhook-cert-path="+certDir,
		fmt.Sprintf("--health-probe-bind-address=:%d", probePort),
		fmt.Sprintf("--metrics-bind-address=:%d", metricsPort),
		"--leader-elect",
		"--leader-election-namespace="+operatorNamespace,
	)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = f.Close(); close(done) }()
	t.Cleanup(func() { terminate(cmd, done) })
	NewWithT(t).Eventually(func() error {
		select {
		case <-done:
			return StopTrying("the operator exited")
		default:
		}
		return testutil.Readyz(probePort)
	}, 3*time.Minute, interval).Should(Succeed(), "%s ready; its log:\n%s", binary, fileTail(logPath, 60))
	return cmd, done
}

// terminate stops cmd as a Deployment's rollout stops an old Pod: SIGTERM,
// then SIGKILL after the grace period (30 s, Kubernetes' default). It
// returns whether cmd ended within the grace period.
func terminate(cmd *exec.Cmd, exited <-chan struct{}) bool {
	select {
	case <-exited:
		return true
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return true
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return false
	}
}

func fileTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	return tail(string(data), n)
}

// parentRef names one object of the operator's kinds.
type parentRef struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

func (p parentRef) String() string {
	if p.namespace == "" {
		return p.gvk.Kind + " " + p.name
	}
	return p.gvk.Kind + " " + p.namespace + "/" + p.name
}

func (p parentRef) get() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(p.gvk)
	return u, admin.Get(ctx(), client.ObjectKey{Namespace: p.namespace, Name: p.name}, u)
}

// readyStatus returns u's Ready condition status ("" without one) and
// whether its status describes its current generation.
func readyStatus(u *unstructured.Unstructured) (ready string, current bool) {
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			ready, _ = m["status"].(string)
		}
	}
	return ready, observed == u.GetGeneration()
}

// readyWatch records every Ready status the watched parents are seen
// with, watching each kind (a watch sees every version of an object, a
// poll could miss a short flap).
type readyWatch struct {
	mu     sync.Mutex
	seen   map[string][]string
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// watchReady starts watching the Ready condition of parents, from their
// present state on.
func watchReady(t *testing.T, parents []parentRef) *readyWatch {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	w := &readyWatch{seen: map[string][]string{}, cancel: cancel}
	wanted := map[string]bool{}
	kinds := map[schema.GroupVersionKind]map[string]bool{}
	for _, p := range parents {
		wanted[p.String()] = true
		if kinds[p.gvk] == nil {
			kinds[p.gvk] = map[string]bool{}
		}
		kinds[p.gvk][p.namespace] = true
	}
	for gvk, namespaces := range kinds {
		for ns := range namespaces {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := admin.List(ctx(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for i := range list.Items {
				w.record(wanted, gvk, &list.Items[i])
			}
			mapping, err := admin.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatal(err)
			}
			w.done.Add(1)
			go w.follow(c, dc.Resource(mapping.Resource).Namespace(ns), wanted, gvk, list.GetResourceVersion())
		}
	}
	t.Cleanup(w.stop)
	return w
}

func (w *readyWatch) follow(c context.Context, resource dynamic.ResourceInterface, wanted map[string]bool,
	gvk schema.GroupVersionKind, resourceVersion string) {
	defer w.done.Done()
	for c.Err() == nil {
		watcher, err := resource.Watch(c, metav1.ListOptions{ResourceVersion: resourceVersion})
		if err != nil {
			select {
			case <-c.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range watcher.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Error || ev.Type == watch.Bookmark {
				continue
			}
			resourceVersion = u.GetResourceVersion()
			if ev.Type != watch.Deleted {
				w.record(wanted, gvk, u)
			}
		}
		watcher.Stop()
	}
}

func (w *readyWatch) record(wanted map[string]bool, gvk schema.GroupVersionKind, u *unstructured.Unstructured) {
	key := parentRef{gvk, u.GetNamespace(), u.GetName()}.String()
	if !wanted[key] {
		return
	}
	ready, _ := readyStatus(u)
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.seen[key]; len(s) == 0 || s[len(s)-1] != ready {
		w.seen[key] = append(s, ready)
	}
}

func (w *readyWatch) stop() {
	w.cancel()
	w.done.Wait()
}

// flaps returns, for each parent whose Ready status changed while watched,
// the statuses it went through.
func (w *readyWatch) flaps() map[string][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]string{}
	for key, s := range w.seen {
		if len(s) > 1 {
			out[key] = slices.Clone(s)
		}
	}
	return out
}

// childFingerprint is what of a child a writer other than its status
// writer changes: the object without status and resourceVersion, and
// without the managedFields entries of status writers (the
// kube-controller-manager's Deployment and StatefulSet status).
func childFingerprint(u *unstructured.Unstructured) string {
	obj := u.DeepCopy().Object
	delete(obj, "status")
	unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
	c := &unstructured.Unstructured{Object: obj}
	var kept []metav1.ManagedFieldsEntry
	for _, e := range c.GetManagedFields() {
		if e.Subresource != "status" {
			kept = append(kept, e)
		}
	}
	c.SetManagedFields(kept)
	data, _ := json.Marshal(obj)
	return string(data)
}

// children lists the operator's children (app.kubernetes.io/managed-by) of
// the kinds it makes in namespace, by "Kind name", with their fingerprints.
func children(g Gomega, namespace string) map[string]string {
	out := map[string]string{}
	for _, kind := range []string{"Deployment", "StatefulSet", "Service", "ConfigMap"} {
		gv := "v1"
		if kind == "Deployment" || kind == "StatefulSet" {
			gv = "apps/v1"
		}
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(gv)
		list.SetKind(kind + "List")
		g.Expect(admin.List(ctx(), list, client.InNamespace(namespace),
			client.MatchingLabels{"app.kubernetes.io/managed-by": "sunstrider-operator"})).To(Succeed())
		for i := range list.Items {
			out[kind+" "+list.Items[i].GetName()] = childFingerprint(&list.Items[i])
		}
	}
	return out
}

// operands records what runs: for each Deployment and StatefulSet of
// namespace, its ReplicaSets (name/UID) or revision, and its Pods' UIDs.
func operands(g Gomega, namespace string) map[string][]string {
	out := map[string][]string{}
	owned := func(refs []metav1.OwnerReference) (string, bool) {
		for _, r := range refs {
			if r.Controller != nil && *r.Controller {
				return string(r.UID), true
			}
		}
		return "", false
	}
	name := map[string]string{}
	list := func(gv, kind string) []unstructured.Unstructured {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(gv)
		l.SetKind(kind + "List")
		g.Expect(admin.List(ctx(), l, client.InNamespace(namespace))).To(Succeed())
		return l.Items
	}
	for _, d := range list("apps/v1", "Deployment") {
		name[string(d.GetUID())] = "Deployment " + d.GetName()
		out["Deployment "+d.GetName()] = []string{}
	}
	for _, s := range list("apps/v1", "StatefulSet") {
		key := "StatefulSet " + s.GetName()
		name[string(s.GetUID())] = key
		revision, _, _ := unstructured.NestedString(s.Object, "status", "updateRevision")
		out[key] = []string{"revision " + revision}
	}
	for _, rs := range list("apps/v1", "ReplicaSet") {
		uid, ok := owned(rs.GetOwnerReferences())
		if key, mine := name[uid]; ok && mine {
			name[string(rs.GetUID())] = key
			out[key] = append(out[key], fmt.Sprintf("ReplicaSet %s/%s", rs.GetName(), rs.GetUID()))
		}
	}
	for _, p := range list("v1", "Pod") {
		uid, ok := owned(p.GetOwnerReferences())
		if key, mine := name[uid]; ok && mine {
			out[key] = append(out[key], fmt.Sprintf("Pod %s/%s", p.GetName(), p.GetUID()))
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// metricsScraper reads the local operator's /metrics (HTTPS, as a
// ServiceAccount bound to the metrics-reader ClusterRole).
type metricsScraper struct {
	client *http.Client
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// newMetricsScraper makes a ServiceAccount in namespace allowed to read
// the operator's metrics.
func newMetricsScraper(t *testing.T, namespace string) *metricsScraper {
	t.Helper()
	mustSh(t, nil, kubectl, "create", "serviceaccount", "scraper", "-n", namespace)
	binding := namespace + "-scraper"
	mustSh(t, nil, kubectl, "create", "clusterrolebinding", binding,
		"--clusterrole=sunstrider-operator-metrics-reader", "--serviceaccount="+namespace+":scraper")
	t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "clusterrolebinding", binding, "--ignore-not-found") })
	token := strings.TrimSpace(mustSh(t, nil, kubectl, "create", "token", "scraper", "-n", namespace, "--duration=1h"))
	return &metricsScraper{client: &http.Client{Timeout: 10 * time.Second, Transport: bearerTransport{
		token: token,
		base: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // localhost
		},
	}}}
}

// reconciles returns controller_runtime_reconcile_total of each of
// controllers, summed over the results that are not errors.
func (m *metricsScraper) reconciles(controllers ...string) (map[string]float64, error) {
	series, err := testutil.ScrapeMetrics(m.client, fmt.Sprintf("https://localhost:%d/metrics", metricsPort))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, c := range controllers {
		out[c] = 0
	}
	for s, v := range series {
		if !strings.HasPrefix(s, "controller_runtime_reconcile_total{") || strings.Contains(s, `result="error"`) {
			continue
		}
		for _, c := range controllers {
			if strings.Contains(s, fmt.Sprintf(`controller=%q`, c)) {
				out[c] += v
			}
		}
	}
	return out, nil
}

// appWriter creates and updates Applications, as a user or a CD pipeline
// would, until stopped: a new Application every other write, the
// replicas of an existing one changed otherwise. It remembers the last
// spec the API server accepted for each; a refused write (no webhook
// answering while the operator is replaced) is retried on the next tick.
type appWriter struct {
	namespace string
	mu        sync.Mutex
	replicas  map[string]int32
	accepted  []time.Time
	refused   int
	stopCh    chan struct{}
	done      chan struct{}
}

func startAppWriter(namespace string, newApp func(name string, replicas int32) *sunappsv1.Application) *appWriter {
	w := &appWriter{namespace: namespace, replicas: map[string]int32{},
		stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(400 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-w.stopCh:
				return
			case <-tick.C:
			}
			w.mu.Lock()
			names := make([]string, 0, len(w.replicas))
			for n := range w.replicas {
				names = append(names, n)
			}
			w.mu.Unlock()
			slices.Sort(names)
			var err error
			if i%2 == 0 || len(names) == 0 {
				name := fmt.Sprintf("live-%d", len(names))
				if err = admin.Create(ctx(), newApp(name, 1)); err == nil || apierrors.IsAlreadyExists(err) {
					w.accept(name, 1)
					err = nil
				}
			} else {
				name := names[(i/2)%len(names)]
				err = w.scale(name)
			}
			if err != nil {
				w.mu.Lock()
				w.refused++
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// scale flips name's replicas between 1 and 2.
func (w *appWriter) scale(name string) error {
	app := &sunappsv1.Application{}
	if err := admin.Get(ctx(), client.ObjectKey{Namespace: w.namespace, Name: name}, app); err != nil {
		return err
	}
	want := int32(3) - *app.Spec.Deployment.Replicas
	app.Spec.Deployment.Replicas = &want
	if err := admin.Update(ctx(), app); err != nil {
		return err
	}
	w.accept(name, want)
	return nil
}

func (w *appWriter) accept(name string, replicas int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.replicas[name] = replicas
	w.accepted = append(w.accepted, time.Now())
}

// acceptedSince counts the writes accepted after t.
func (w *appWriter) acceptedSince(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, a := range w.accepted {
		if a.After(t) {
			n++
		}
	}
	return n
}

// stop ends the writer and returns the last accepted replicas of each
// Application it made, the writes accepted and refused.
func (w *appWriter) stop() (last map[string]int32, accepted, refused int) {
	select {
	case <-w.stopCh:
	default:
		close(w.stopCh)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.replicas, len(w.accepted), w.refused
}
