//go:build chaos

package chaos

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/apply"
)

const (
	crashNamespace = "chaos-crash"
	// The load: 200 objects in all, a third of them updated several times,
	// an eighth deleted.
	crashApps    = 80
	crashDrinks  = 60
	crashMCRs    = 60
	crashFriends = 10
	// crashKills is how many times a replica is killed with SIGKILL.
	crashKills = 12
	// loadDuration spreads the load over the whole kill phase.
	loadDuration = 75 * time.Second
)

// desired is the load driver's record of the last spec it wrote to each
// object; deleted objects are dropped from it.
type desired struct {
	mu     sync.Mutex
	apps   map[string]appSpec
	drinks map[string]string // name -> spec.drink
	mcrs   map[string]string // name -> friend
	gone   map[string]bool   // kind/name of deleted objects
}

type appSpec struct {
	image    string
	replicas int32
	ports    bool
}

func newApp(name string, s appSpec) *sunappsv1.Application {
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: crashNamespace}}
	app.Spec.Deployment.Replicas = new(s.replicas)
	app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: s.image}}
	if s.ports {
		app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	}
	return app
}

// op is one step of the load.
type op func() error

// loadOps returns the driver's steps in order: every create, then updates
// and deletes interleaved at random, each recorded in want once it
// succeeded.
func loadOps(want *desired, rng *rand.Rand) []op {
	var ops []op
	record := func(f func()) { want.mu.Lock(); f(); want.mu.Unlock() }
	for i := range crashFriends {
		name := fmt.Sprintf("friend-%d", i)
		ops = append(ops, func() error {
			return admin.Create(ctx(), &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: crashNamespace},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			})
		})
	}
	var later []op
	for i := range crashApps {
		name := fmt.Sprintf("app-%03d", i)
		s := appSpec{image: "nginx:1.0", replicas: int32(i % 3), ports: i%2 == 0}
		ops = append(ops, func() error {
			if err := admin.Create(ctx(), newApp(name, s)); err != nil {
				return err
			}
			record(func() { want.apps[name] = s })
			return nil
		})
		for v := range rng.IntN(4) {
			image, replicas := fmt.Sprintf("nginx:1.%d", v+1), int32(rng.IntN(3))
			later = append(later, func() error {
				patch := fmt.Sprintf(`{"spec":{"deployment":{"replicas":%d,`+
					`"template":{"spec":{"containers":[{"name":"web","image":%q}]}}}}}`, replicas, image)
				if err := patchMerge(&sunappsv1.Application{}, name, patch); err != nil {
					return err
				}
				record(func() { s := want.apps[name]; s.image, s.replicas = image, replicas; want.apps[name] = s })
				return nil
			})
		}
		if i%8 == 7 {
			later = append(later, deleteOp(want, &sunappsv1.Application{}, "Application", name))
		}
	}
	for i := range crashDrinks {
		name := fmt.Sprintf("drink-%03d", i)
		ops = append(ops, func() error {
			d := &examplev1.Drink{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: crashNamespace},
				Spec: examplev1.DrinkSpec{Name: name, Drink: "tea"}}
			if err := admin.Create(ctx(), d); err != nil {
				return err
			}
			record(func() { want.drinks[name] = "tea" })
			return nil
		})
		for v := range rng.IntN(4) {
			kind := fmt.Sprintf("coffee %d", v)
			later = append(later, func() error {
				if err := patchMerge(&examplev1.Drink{}, name, fmt.Sprintf(`{"spec":{"drink":%q}}`, kind)); err != nil {
					return err
				}
				record(func() { want.drinks[name] = kind })
				return nil
			})
		}
		if i%8 == 7 {
			later = append(later, deleteOp(want, &examplev1.Drink{}, "Drink", name))
		}
	}
	for i := range crashMCRs {
		name := fmt.Sprintf("mcr-%03d", i)
		friend := fmt.Sprintf("friend-%d", i%crashFriends)
		if i%2 == 1 {
			friend = fmt.Sprintf("ghost-%d", i)
		}
		ops = append(ops, func() error {
			obj := &pocv1.MyCustomResource{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: crashNamespace},
				Spec: pocv1.MyCustomResourceSpec{Name: friend}}
			if err := admin.Create(ctx(), obj); err != nil {
				return err
			}
			record(func() { want.mcrs[name] = friend })
			return nil
		})
		for range rng.IntN(3) {
			next := fmt.Sprintf("friend-%d", rng.IntN(crashFriends*2)) // half of them never exist
			later = append(later, func() error {
				if err := patchMerge(&pocv1.MyCustomResource{}, name, fmt.Sprintf(`{"spec":{"name":%q}}`, next)); err != nil {
					return err
				}
				record(func() { want.mcrs[name] = next })
				return nil
			})
		}
		if i%8 == 7 {
			later = append(later, deleteOp(want, &pocv1.MyCustomResource{}, "MyCustomResource", name))
		}
	}
	// The record follows the order of execution, so updates of one object
	// may run in any order.
	rng.Shuffle(len(later), func(i, j int) { later[i], later[j] = later[j], later[i] })
	// A delete may now come before an update of the same object: the
	// update then fails NotFound and is not recorded (see run).
	return append(ops, later...)
}

func patchMerge(obj client.Object, name, patch string) error {
	obj.SetName(name)
	obj.SetNamespace(crashNamespace)
	return admin.Patch(ctx(), obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

func deleteOp(want *desired, obj client.Object, kind, name string) op {
	return func() error {
		obj.SetName(name)
		obj.SetNamespace(crashNamespace)
		if err := admin.Delete(ctx(), obj); err != nil {
			return err
		}
		want.mu.Lock()
		defer want.mu.Unlock()
		want.gone[kind+"/"+name] = true
		delete(want.apps, name)
		delete(want.drinks, name)
		delete(want.mcrs, name)
		return nil
	}
}

// TestCrashConsistencyUnderLeaderKills drives 200 Applications, Drinks and
// MyCustomResources through creates, updates and deletes while replicas
// are killed with SIGKILL at random (the leader every other time), and
// expects every object converged to its last spec with exactly one live
// owner per child once the load stops.
func TestCrashConsistencyUnderLeaderKills(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, crashNamespace)
	startReplicas(t)
	start := time.Now()

	want := &desired{
		apps: map[string]appSpec{}, drinks: map[string]string{}, mcrs: map[string]string{}, gone: map[string]bool{},
	}
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 1))
	ops := loadOps(want, rng)

	// The load driver: one step per tick.
	loadDone := make(chan error, 1)
	go func() {
		tick := time.NewTicker(loadDuration / time.Duration(len(ops)))
		defer tick.Stop()
		for _, o := range ops {
			<-tick.C
			if err := o(); err != nil && !apierrors.IsNotFound(err) {
				loadDone <- err
				return
			}
		}
		loadDone <- nil
	}()

	// The chaos: crashKills SIGKILLs at random moments of the load, the
	// leader on even kills, a random replica on odd ones; each killed
	// replica restarts at once.
	kills, leaderKills := 0, 0
	killEvery := loadDuration / crashKills
	timer := time.NewTimer(killEvery/2 + time.Duration(rng.Int64N(int64(killEvery/2))))
	defer timer.Stop()
	for kills < crashKills {
		<-timer.C
		victim := replicas[rng.IntN(len(replicas))]
		if kills%2 == 0 {
			// The leader; after a kill of the leader there is none for up
			// to a lease duration.
			g.Eventually(leader, 30*time.Second).ShouldNot(BeNil(), "no leader")
			if l := leader(); l != nil {
				victim = l
			}
		}
		if victim.leads() {
			leaderKills++
		}
		victim.stop(syscall.SIGKILL)
		kills++
		victim.start(t)
		timer.Reset(killEvery/2 + time.Duration(rng.Int64N(int64(killEvery))))
	}
	g.Expect(<-loadDone).To(Succeed(), "the load driver")
	t.Logf("load of %d steps done in %s with %d SIGKILLs (%d of the leader), all survived",
		len(ops), time.Since(start).Round(time.Second), kills, leaderKills)

	converged := time.Now()
	g.Eventually(func(g Gomega) { expectConverged(g, want) }, 3*time.Minute, time.Second).Should(Succeed())
	t.Logf("converged %s after the load", time.Since(converged).Round(100*time.Millisecond))
	g.Expect(leaderKills).To(BeNumerically(">=", crashKills/2))
	expectOneWriterAtATime(t)
}

// expectConverged checks every object of the load against want.
func expectConverged(g Gomega, want *desired) {
	want.mu.Lock()
	defer want.mu.Unlock()
	in := client.InNamespace(crashNamespace)

	apps := &sunappsv1.ApplicationList{}
	g.Expect(admin.List(ctx(), apps, in)).To(Succeed())
	appUIDs := map[types.UID]string{}
	withPorts := 0
	for _, app := range apps.Items {
		s, ok := want.apps[app.Name]
		g.Expect(ok).To(BeTrue(), "Application %s is live but was deleted or never created", app.Name)
		g.Expect(*app.Spec.Deployment.Replicas).To(Equal(s.replicas), "Application %s lost an update", app.Name)
		g.Expect(app.Spec.Deployment.Template.Spec.Containers[0].Image).
			To(Equal(s.image), "Application %s lost an update", app.Name)
		appUIDs[app.UID] = app.Name
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(&app), d)).To(Succeed())
		g.Expect(*d.Spec.Replicas).To(Equal(s.replicas), "Deployment %s replicas", app.Name)
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(s.image), "Deployment %s image", app.Name)
		svc := &corev1.Service{}
		err := admin.Get(ctx(), client.ObjectKeyFromObject(&app), svc)
		if s.ports {
			withPorts++
			g.Expect(err).NotTo(HaveOccurred(), "Service %s", app.Name)
		} else {
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Service %s of an Application without ports: %v", app.Name, err)
		}
	}
	g.Expect(apps.Items).To(HaveLen(len(want.apps)), "live Applications")

	drinks := &examplev1.DrinkList{}
	g.Expect(admin.List(ctx(), drinks, in)).To(Succeed())
	drinkUIDs := map[types.UID]string{}
	for _, d := range drinks.Items {
		kind, ok := want.drinks[d.Name]
		g.Expect(ok).To(BeTrue(), "Drink %s is live but was deleted or never created", d.Name)
		g.Expect(d.Spec.Drink).To(Equal(kind), "Drink %s lost an update", d.Name)
		drinkUIDs[d.UID] = d.Name
		cm := &corev1.ConfigMap{}
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(&d), cm)).To(Succeed())
		g.Expect(cm.Data).To(Equal(map[string]string{"name": d.Spec.Name, "drink": kind}), "ConfigMap %s", d.Name)
	}
	g.Expect(drinks.Items).To(HaveLen(len(want.drinks)), "live Drinks")

	mcrs := &pocv1.MyCustomResourceList{}
	g.Expect(admin.List(ctx(), mcrs, in)).To(Succeed())
	for _, m := range mcrs.Items {
		friend, ok := want.mcrs[m.Name]
		g.Expect(ok).To(BeTrue(), "MyCustomResource %s is live but was deleted or never created", m.Name)
		g.Expect(m.Spec.Name).To(Equal(friend), "MyCustomResource %s lost an update", m.Name)
		err := admin.Get(ctx(), client.ObjectKey{Namespace: crashNamespace, Name: friend}, &corev1.Pod{})
		g.Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(m.Status.Healthy).To(Equal(err == nil), "MyCustomResource %s (friend %s) Healthy", m.Name, friend)
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation), "MyCustomResource %s observed generation", m.Name)
	}
	g.Expect(mcrs.Items).To(HaveLen(len(want.mcrs)), "live MyCustomResources")

	// Children: each labelled one has exactly one controller, a live owner
	// of the same name; none is left over from a deleted owner; none is
	// missing.
	managed := client.MatchingLabels{apply.ManagedByLabel: apply.ManagedByValue}
	deployments := &appsv1.DeploymentList{}
	g.Expect(admin.List(ctx(), deployments, in, managed)).To(Succeed())
	services := &corev1.ServiceList{}
	g.Expect(admin.List(ctx(), services, in, managed)).To(Succeed())
	configMaps := &corev1.ConfigMapList{}
	g.Expect(admin.List(ctx(), configMaps, in, managed)).To(Succeed())
	children := make([]metav1.Object, 0, len(deployments.Items)+len(services.Items))
	for i := range deployments.Items {
		children = append(children, &deployments.Items[i])
	}
	for i := range services.Items {
		children = append(children, &services.Items[i])
	}
	for _, c := range children {
		expectOwnedBy(g, c, "Application", appUIDs)
	}
	for i := range configMaps.Items {
		expectOwnedBy(g, &configMaps.Items[i], "Drink", drinkUIDs)
	}
	g.Expect(deployments.Items).To(HaveLen(len(apps.Items)), "one Deployment per Application")
	g.Expect(services.Items).To(HaveLen(withPorts), "one Service per Application with ports")
	g.Expect(configMaps.Items).To(HaveLen(len(drinks.Items)), "one ConfigMap per Drink")
}

func expectOwnedBy(g Gomega, child metav1.Object, kind string, owners map[types.UID]string) {
	var controllers []metav1.OwnerReference
	for _, ref := range child.GetOwnerReferences() {
		if ptr.Deref(ref.Controller, false) {
			controllers = append(controllers, ref)
		}
	}
	g.Expect(controllers).To(HaveLen(1), "controllers of %s", child.GetName())
	ref := controllers[0]
	g.Expect(ref.Kind).To(Equal(kind), "controller of %s", child.GetName())
	g.Expect(owners).To(HaveKeyWithValue(ref.UID, child.GetName()),
		"%s %s is controlled by a deleted or other %s", kind, child.GetName(), kind)
}
