//go:build chaos

// Package chaos injects faults into the operator running as two local
// replicas of bin/manager with leader election, on a local cluster of its
// own (kwokctl's binary runtime): SIGKILL under load, leader failover,
// drift of its children, foreign objects in the way. `make test-chaos`
// starts the cluster and runs it; docs/reliability.md has the figures.
//
// The replicas run without webhooks (--enable-webhooks=false, and the
// webhook configurations are not installed): this suite is about
// reconciliation, and webhook availability is the e2e suite's business.
// They talk to the cluster as its administrator: the shipped RBAC is the
// e2e suite's business too.
package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
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
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	// systemNamespace holds the replicas' leader election Lease.
	systemNamespace = "chaos-system"
	leaseName       = "sunstrider-operator.sunstrider.cn"
	// acquiredMessage is what a replica logs when it becomes the leader
	// (compared in lower case).
	acquiredMessage = "successfully acquired lease"
)

// replicaPorts are each replica's local ports, apart from make dev's, the
// e2e suite's and the benchmark's, and below the kernel's ephemeral range
// (32768 and up): a port in it was once taken as another process's source
// port when the suites ran side by side. Metrics are served over plain
// HTTP on localhost (--metrics-secure=false): the secure endpoint
// authenticates its callers through the API server, and
// TestAPIServerRestartDuringChurn reads them while the API server is away.
var replicaPorts = []struct{ webhook, probe, metrics int }{{17443, 17081, 17091}, {17444, 17082, 17092}}

var (
	scheme    = runtime.NewScheme()
	root      string
	kubectl   string
	kustomize string
	manager   string
	workDir   string
	admin     client.Client
	replicas  []*replica
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(pocv1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	SetDefaultEventuallyTimeout(2 * time.Minute)
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = testutil.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tools := map[string]*string{"KUBECTL": &kubectl, "KUSTOMIZE": &kustomize, "MANAGER": &manager}
	if workDir, admin, err = testutil.LocalCluster("test-chaos", "sunstrider-chaos-", scheme, tools); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	for _, r := range replicas {
		r.stop(syscall.SIGTERM)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "replica logs are kept in %s\n", workDir)
	} else {
		_ = os.RemoveAll(workDir)
	}
	return code
}

// install puts the CRDs into the cluster, without conversion webhook (only
// example.com/v1, the storage version, is used), and the Lease's namespace.
func install() error {
	crds, err := command(nil, kustomize, "build", "config/crd")
	if err != nil {
		return err
	}
	if _, err := command([]byte(crds), kubectl, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		return err
	}
	if _, err := command(nil, kubectl, "patch", "crd", "drinks.example.com", "--type=merge",
		"-p", `{"spec":{"conversion":{"strategy":"None","webhook":null}}}`); err != nil {
		return err
	}
	// kubectl wait gives up at once, rather than waiting, on a CRD whose
	// status.conditions is still null just after it was made ("accessor
	// error: <nil> is of the type <nil>", CI of 2026-12-04): ask again.
	var waited error
	if err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true,
		func(context.Context) (bool, error) {
			_, waited = command(nil, kubectl, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
			return waited == nil, nil
		}); err != nil {
		return fmt.Errorf("waiting for the CRDs to be established: %w (last: %w)", err, waited)
	}
	// The operator's configuration, as its init container would make it,
	// with a short conflict recheck: the foreign-object windows must span
	// one, and 30 s each would cost the suite minutes.
	if _, err := command([]byte(operatorConfiguration), kubectl, "apply", "--server-side", "-f", "-"); err != nil {
		return err
	}
	_, err = command(nil, kubectl, "create", "namespace", systemNamespace)
	return err
}

// conflictRecheck is the operator's conflict recheck interval in the chaos
// suite (OperatorConfiguration spec.conflictRecheckInterval).
const conflictRecheck = 5 * time.Second

const operatorConfiguration = `apiVersion: config.sunstrider.cn/v1alpha1
kind: OperatorConfiguration
metadata:
  name: default
spec:
  conflictRecheckInterval: 5s
`

// command runs a command in the repository and returns its combined output.
func command(stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	if stdin != nil {
		cmd.Stdin = strings.NewReader(string(stdin))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func mustRun(t testing.TB, stdin []byte, name string, args ...string) string {
	t.Helper()
	out, err := command(stdin, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ctx() context.Context { return context.Background() }

// replica is one slot of the operator: one bin/manager process at a time,
// restarted after each kill, each run logging to its own file.
type replica struct {
	slot int
	mu   sync.Mutex
	cmd  *exec.Cmd
	log  string
	runs int
	done chan struct{}
}

// startReplicas starts both replicas (once per test binary) and waits until
// one of them leads.
func startReplicas(t *testing.T) {
	t.Helper()
	if replicas == nil {
		for slot := range replicaPorts {
			r := &replica{slot: slot}
			replicas = append(replicas, r)
			r.start(t)
		}
	}
	for _, r := range replicas {
		if !r.alive() {
			r.start(t)
		}
	}
	NewWithT(t).Eventually(leader, time.Minute).ShouldNot(BeNil(), "no replica acquired the lease")
}

// start runs a new process in r's slot and waits until it is ready.
func (r *replica) start(t testing.TB) {
	t.Helper()
	if err := r.spawn(); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	done, log := r.done, r.log
	r.mu.Unlock()
	NewWithT(t).Eventually(func() error {
		select {
		case <-done:
			return StopTrying("replica exited:\n" + tail(log, 30))
		default:
		}
		return r.ready()
	}, time.Minute).Should(Succeed())
}

// spawn runs a new process in r's slot without waiting for it.
func (r *replica) spawn() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.log = filepath.Join(workDir, fmt.Sprintf("replica-%d-run-%02d.log", r.slot, r.runs))
	f, err := os.Create(r.log)
	if err != nil {
		return err
	}
	ports := replicaPorts[r.slot]
	cmd := exec.Command(manager,
		"--leader-elect",
		"--leader-election-namespace="+systemNamespace,
		"--enable-webhooks=false",
		fmt.Sprintf("--webhook-port=%d", ports.webhook),
		"--webhook-cert-path="+filepath.Join(workDir, fmt.Sprintf("certs-%d", r.slot)),
		fmt.Sprintf("--health-probe-bind-address=localhost:%d", ports.probe),
		fmt.Sprintf("--metrics-bind-address=localhost:%d", ports.metrics),
		"--metrics-secure=false",
		"--zap-encoder=json",
		"--zap-time-encoding=rfc3339nano",
		// Status writes are logged at debug level, with the parts that
		// changed: a failure can then tell the operator's view apart.
		"--zap-log-level=debug",
	)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+os.Getenv("KUBECONFIG"))
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = f.Close(); close(done) }()
	r.cmd, r.done = cmd, done
	return nil
}

// ready tells whether r's current process answers its readiness probe.
func (r *replica) ready() error {
	return testutil.Readyz(replicaPorts[r.slot].probe)
}

func (r *replica) alive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// stop sends sig to r's process and waits until it exited (SIGKILL after
// 30 s).
func (r *replica) stop(sig syscall.Signal) {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// leads tells whether r's current process holds the lease: it logged
// acquiring it (a replica that loses the lease exits).
func (r *replica) leads() bool {
	if !r.alive() {
		return false
	}
	r.mu.Lock()
	log := r.log
	r.mu.Unlock()
	data, _ := os.ReadFile(log)
	return strings.Contains(strings.ToLower(string(data)), acquiredMessage)
}

// leader returns the replica leading now, nil when none does.
func leader() *replica {
	for _, r := range replicas {
		if r.leads() {
			return r
		}
	}
	return nil
}

func other(r *replica) *replica {
	return replicas[1-r.slot]
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logLine is the part of a replica's JSON log line the suite reads.
type logLine struct {
	TS  string `json:"ts"`
	Msg string `json:"msg"`
}

// writeMessages are the Info lines logged after each write to a child: only
// a leader writes.
var writeMessages = []string{"Applied children"}

// runWrites is when one run of a replica wrote children: its first and
// last write.
type runWrites struct {
	log         string
	first, last time.Time
	count       int
}

// writesByRun reads every replica log of this test binary.
func writesByRun(t *testing.T) []runWrites {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(workDir, "replica-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []runWrites
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		w := runWrites{log: filepath.Base(file)}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1024*1024), 1024*1024)
		for sc.Scan() {
			var l logLine
			if json.Unmarshal(sc.Bytes(), &l) != nil || !slices.Contains(writeMessages, l.Msg) {
				continue
			}
			ts, err := time.Parse(time.RFC3339Nano, l.TS)
			if err != nil {
				continue
			}
			if w.count == 0 || ts.Before(w.first) {
				w.first = ts
			}
			if ts.After(w.last) {
				w.last = ts
			}
			w.count++
		}
		_ = f.Close()
		if w.count > 0 {
			runs = append(runs, w)
		}
	}
	slices.SortFunc(runs, func(a, b runWrites) int { return a.first.Compare(b.first) })
	return runs
}

// expectOneWriterAtATime fails when two replica runs wrote children in
// overlapping periods: two leaders at once.
func expectOneWriterAtATime(t *testing.T) {
	t.Helper()
	runs := writesByRun(t)
	for i := 1; i < len(runs); i++ {
		if runs[i].first.Before(runs[i-1].last) {
			t.Errorf("two replicas wrote at once: %s wrote %s..%s, %s wrote %s..%s",
				runs[i-1].log, runs[i-1].first.Format(time.StampMilli), runs[i-1].last.Format(time.StampMilli),
				runs[i].log, runs[i].first.Format(time.StampMilli), runs[i].last.Format(time.StampMilli))
		}
	}
	t.Logf("%d replica runs wrote children, one after the other", len(runs))
}

// logMentions tells whether the log of r's current process has a write
// line for the child named name.
func logMentions(r *replica, name string) bool {
	r.mu.Lock()
	log := r.log
	r.mu.Unlock()
	data, _ := os.ReadFile(log)
	for line := range strings.Lines(string(data)) {
		var l logLine
		if json.Unmarshal([]byte(line), &l) == nil && slices.Contains(writeMessages, l.Msg) &&
			strings.Contains(line, `"`+name+`"`) {
			return true
		}
	}
	return false
}

// percentile returns the p-th percentile (0..100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// createNamespace makes a namespace for one test, removed after it, and
// waits for its default ServiceAccount: until kube-controller-manager has
// made it, the API server refuses every Pod there ("error looking up
// service account"), which a busy machine once made a load driver see.
func createNamespace(t *testing.T, name string) {
	t.Helper()
	mustRun(t, nil, kubectl, "create", "namespace", name)
	mustRun(t, nil, kubectl, "wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=60s")
	t.Cleanup(func() {
		if !t.Failed() {
			_, _ = command(nil, kubectl, "delete", "namespace", name, "--wait=false")
		}
	})
}

// every calls fn every period, from a goroutine of its own, until the
// returned stop function is called; stop waits for a call in progress and
// may be called more than once.
func every(period time.Duration, fn func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}
