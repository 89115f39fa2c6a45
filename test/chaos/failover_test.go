//go:build chaos

package chaos

import (
	"flag"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

const (
	failoverNamespace = "chaos-failover"
	// Targets with the operator's default lease settings (15 s lease, 10 s
	// renew deadline, 1 s retry period).
	//
	// After a SIGKILL the heir polls the Lease every 1 to 2.2 s (retry
	// period, jitter 1.2), so it notices the last renewal up to 2.2 s late,
	// counts the 15 s lease from then, and takes the Lease at its first poll
	// after that, up to 2.2 s later: at most 19.4 s after the last renewal,
	// about 16.5 s on average, plus a few hundred milliseconds to start its
	// controllers and reconcile. (With controller-runtime's 2 s retry period
	// the worst case is 23.8 s: one CI round took 21.1 s.)
	killFailoverTarget = 20 * time.Second
	termFailoverTarget = 5 * time.Second
)

var failoverRounds = flag.Int("failover-rounds", 3, "rounds of each leader failover (SIGKILL, SIGTERM)")

// TestLeaderFailover stops the leader, with SIGKILL and with SIGTERM, and
// measures until the other replica reconciles an object created right
// after: a Drink gets its ConfigMap. Throughout, the Lease names one
// holder at a time and no two replica runs write in overlapping periods.
func TestLeaderFailover(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, failoverNamespace)
	startReplicas(t)

	holders := watchLease(t)
	results := map[syscall.Signal][]time.Duration{}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for round := range *failoverRounds {
			g.Eventually(leader, time.Minute).ShouldNot(BeNil(), "no leader before round %d", round)
			for _, r := range replicas {
				if !r.alive() {
					r.start(t)
				}
			}
			old := leader()
			g.Expect(old).NotTo(BeNil())
			heir := other(old)
			name := fmt.Sprintf("%s-%d", map[syscall.Signal]string{syscall.SIGKILL: "kill", syscall.SIGTERM: "term"}[sig], round)

			start := time.Now()
			old.stop(sig)
			g.Expect(admin.Create(ctx(), &examplev1.Drink{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: failoverNamespace},
				Spec:       examplev1.DrinkSpec{Name: name, Drink: "tea"},
			})).To(Succeed())
			g.Eventually(func() error {
				return admin.Get(ctx(), client.ObjectKey{Namespace: failoverNamespace, Name: name}, &corev1.ConfigMap{})
			}, time.Minute, 50*time.Millisecond).Should(Succeed(), "Drink %s never reconciled", name)
			took := time.Since(start)
			results[sig] = append(results[sig], took)
			t.Logf("%s of the leader: the other replica reconciled a new Drink after %s", sig, took.Round(10*time.Millisecond))

			// The reconciling process is the heir, now leading; the old
			// leader is gone.
			g.Expect(old.alive()).To(BeFalse())
			g.Expect(heir.leads()).To(BeTrue(), "the surviving replica leads")
			// The heir logs the write after the API server answered it: the
			// ConfigMap can be read a moment before the line is written.
			g.Eventually(func() bool { return logMentions(heir, name) }).Should(BeTrue(),
				"the surviving replica wrote ConfigMap %s", name)
			old.start(t)
		}
	}
	kill, term := slices.Max(results[syscall.SIGKILL]), slices.Max(results[syscall.SIGTERM])
	t.Logf("failover, worst of %d: SIGKILL %s (target %s), SIGTERM %s (target %s); lease holders in turn: %d",
		*failoverRounds, kill.Round(10*time.Millisecond), killFailoverTarget,
		term.Round(10*time.Millisecond), termFailoverTarget, len(holders()))
	g.Expect(kill).To(BeNumerically("<=", killFailoverTarget), "SIGKILL failover")
	g.Expect(term).To(BeNumerically("<=", termFailoverTarget), "SIGTERM failover (lease released on cancel)")
	g.Expect(len(holders())).To(BeNumerically(">=", 2**failoverRounds), "the Lease changed hands at each round")
	expectOneWriterAtATime(t)
}

// watchLease polls the Lease until the test ends and returns the sequence
// of its holders. A Lease names one holder by construction; what the
// sequence shows is that it changed hands at each failover and never
// flapped back and forth.
func watchLease(t *testing.T) func() []string {
	var seq []string
	stop := every(50*time.Millisecond, func() {
		lease := &coordinationv1.Lease{}
		if admin.Get(ctx(), client.ObjectKey{Namespace: systemNamespace, Name: leaseName}, lease) != nil {
			return
		}
		h := ptr.Deref(lease.Spec.HolderIdentity, "")
		if h != "" && (len(seq) == 0 || seq[len(seq)-1] != h) {
			seq = append(seq, h)
		}
	})
	t.Cleanup(stop)
	return func() []string {
		stop()
		return seq
	}
}
