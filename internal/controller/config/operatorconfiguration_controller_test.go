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

package config

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/settings"
	"sunstrider.cn/operator/internal/testutil"
)

const controllerName = "config-operatorconfiguration"

func getConfig(g Gomega) *configv1alpha1.OperatorConfiguration {
	cfg := &configv1alpha1.OperatorConfiguration{}
	g.Expect(k8sClient.Get(context.Background(), ConfigurationKey, cfg)).To(Succeed())
	return cfg
}

// setSpec makes the configuration's spec spec, creating it when absent, and
// returns the generation written.
func setSpec(g *WithT, spec configv1alpha1.OperatorConfigurationSpec) int64 {
	var generation int64
	g.Eventually(func(g Gomega) {
		cfg := &configv1alpha1.OperatorConfiguration{}
		err := k8sClient.Get(context.Background(), ConfigurationKey, cfg)
		if apierrors.IsNotFound(err) {
			cfg = &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationKey.Name}, Spec: spec}
			g.Expect(k8sClient.Create(context.Background(), cfg)).To(Succeed())
		} else {
			g.Expect(err).NotTo(HaveOccurred())
			cfg.Spec = spec
			g.Expect(k8sClient.Update(context.Background(), cfg)).To(Succeed())
		}
		generation = cfg.Generation
	}).Should(Succeed())
	return generation
}

// expectReady waits until the status of generation says reason, with
// Reconciling or Stalled as kstatus wants them, and returns it.
func expectReady(g *WithT, generation int64, reason string) *configv1alpha1.OperatorConfiguration {
	var cfg *configv1alpha1.OperatorConfiguration
	g.Eventually(func(g Gomega) {
		cfg = getConfig(g)
		g.Expect(cfg.Status.ObservedGeneration).To(Equal(generation))
		ready := meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(reason))
		g.Expect(ready.ObservedGeneration).To(Equal(generation))
	}).Should(Succeed())
	reconciling := meta.IsStatusConditionTrue(cfg.Status.Conditions, configv1alpha1.ConditionReconciling)
	stalled := meta.IsStatusConditionTrue(cfg.Status.Conditions, configv1alpha1.ConditionStalled)
	g.Expect(reconciling).To(Equal(reason == configv1alpha1.ReasonRestartRequired))
	g.Expect(stalled).To(Equal(reason == configv1alpha1.ReasonRefused))
	return cfg
}

// resetAtEnd puts the empty spec back when the test ends.
func resetAtEnd(t *testing.T) {
	t.Cleanup(func() {
		g := newG(t)
		expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)
	})
}

// The init container's function creates the configuration once, from its
// file, and leaves an existing one alone, however many replicas run it at
// once.
func TestInitConfigCreatesTheConfigurationOnce(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	err := k8sClient.Delete(ctx, &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())

	file := filepath.Join(t.TempDir(), "configuration.yaml")
	g.Expect(os.WriteFile(file, []byte(`apiVersion: config.sunstrider.cn/v1alpha1
kind: OperatorConfiguration
metadata:
  name: default
spec:
  guestbookImage: example.com/guestbook:initial
  logLevel: debug
`), 0o600)).To(Succeed())
	initial, err := settings.Initial(file)
	g.Expect(err).NotTo(HaveOccurred())

	var wg sync.WaitGroup
	created := make(chan bool, 3)
	for range 3 {
		wg.Go(func() {
			ok, err := settings.CreateIfAbsent(ctx, k8sClient, initial.DeepCopy())
			g.Expect(err).NotTo(HaveOccurred())
			created <- ok
		})
	}
	wg.Wait()
	close(created)
	var n int
	for ok := range created {
		if ok {
			n++
		}
	}
	g.Expect(n).To(Equal(1), "exactly one replica creates it")
	cfg := expectReady(g, 1, configv1alpha1.ReasonApplied)
	g.Expect(cfg.Status.Effective.GuestbookImage).To(Equal("example.com/guestbook:initial"))
	g.Expect(holder.Load().GuestbookImage).To(Equal("example.com/guestbook:initial"))

	// An administrator's change is never overwritten by a later start.
	generation := setSpec(g, configv1alpha1.OperatorConfigurationSpec{GuestbookImage: "example.com/guestbook:admin"})
	ok, err := settings.CreateIfAbsent(ctx, k8sClient, initial.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
	g.Expect(getConfig(g).Spec.GuestbookImage).To(Equal("example.com/guestbook:admin"))
	expectReady(g, generation, configv1alpha1.ReasonApplied)

	// Without a file: an empty spec, everything from the flags.
	empty, err := settings.Initial("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty.Name).To(Equal("default"))
	g.Expect(empty.Spec).To(Equal(configv1alpha1.OperatorConfigurationSpec{}))

	// A typo in the file is an error, not a field silently dropped.
	g.Expect(os.WriteFile(file, []byte("spec:\n  guestbookImages: x\n"), 0o600)).To(Succeed())
	_, err = settings.Initial(file)
	g.Expect(err).To(MatchError(ContainSubstring("guestbookImages")))
}

// The API server refuses bad values with the path of the field (CEL and
// the schema), before any operator sees them.
func TestInvalidConfigurationsAreRefusedWithTheirFieldPath(t *testing.T) {
	g := newG(t)
	many := make([]string, 65)
	for i := range many {
		many[i] = "ns"
	}
	for _, tc := range []struct {
		name   string
		mutate func(*configv1alpha1.OperatorConfiguration)
		path   string
	}{
		{"another name", func(c *configv1alpha1.OperatorConfiguration) { c.Name = "other" }, "metadata.name"},
		{"interval too short", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.ConflictRecheckInterval = "500ms" },
			"spec.conflictRecheckInterval"},
		{"interval too long", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.ConflictRecheckInterval = "2h" },
			"spec.conflictRecheckInterval"},
		{"interval not a duration", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.ConflictRecheckInterval = "soon" },
			"spec.conflictRecheckInterval"},
		{"unknown log level", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.LogLevel = "verbose" }, "spec.logLevel"},
		{"log level out of range", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.LogLevel = "10" }, "spec.logLevel"},
		{"image with a space", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.GuestbookImage = "a b" },
			"spec.guestbookImage"},
		{"namespace not a label", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.WatchNamespaces = []string{"Not_A_Label"} },
			"spec.watchNamespaces[0]"},
		{"too many namespaces", func(c *configv1alpha1.OperatorConfiguration) { c.Spec.WatchNamespaces = many },
			"spec.watchNamespaces"},
		{"a GPU", func(c *configv1alpha1.OperatorConfiguration) {
			c.Spec.GuestbookResources = &configv1alpha1.GuestbookResources{
				Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
			}
		}, "spec.guestbookResources.requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newG(t)
			cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			tc.mutate(cfg)
			err := k8sClient.Create(context.Background(), cfg, client.DryRunAll)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.path))
		})
	}
	sample := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: configv1alpha1.OperatorConfigurationSpec{
		GuestbookImage: "registry.k8s.io/guestbook:v3", ConflictRecheckInterval: "1m30s", LogLevel: "3",
		WatchNamespaces: []string{"default"},
	}}
	err := k8sClient.Create(context.Background(), sample, client.DryRunAll)
	g.Expect(err == nil || apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
}

// A new image and new resources reach every Guestbook's StatefulSet at once,
// without touching the Guestbook.
func TestGuestbookImageAndResourcesApplyLive(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)

	ns := testutil.Namespace(t, k8sClient)
	gb := &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "gb-live"},
		Spec:       webappv1.GuestbookSpec{Size: 1, ConfigMapName: "live-conf", Namespace: ns},
	}
	g.Expect(k8sClient.Create(ctx, gb)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, gb) })
	container := func(g Gomega) corev1.Container {
		sts := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: gb.Name}, sts)).To(Succeed())
		return sts.Spec.Template.Spec.Containers[0]
	}
	g.Eventually(func(g Gomega) {
		g.Expect(container(g).Image).To(Equal(defaults.GuestbookImage))
	}).Should(Succeed())

	generation := setSpec(g, configv1alpha1.OperatorConfigurationSpec{
		GuestbookImage: "example.com/guestbook:live",
		GuestbookResources: &configv1alpha1.GuestbookResources{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
	})
	g.Eventually(func(g Gomega) {
		c := container(g)
		g.Expect(c.Image).To(Equal("example.com/guestbook:live"))
		g.Expect(c.Resources.Requests.Cpu().String()).To(Equal("20m"))
		g.Expect(c.Resources.Limits.Memory().String()).To(Equal("128Mi"))
		g.Expect(c.Resources.Requests).NotTo(HaveKey(corev1.ResourceMemory))
	}).Should(Succeed())
	cfg := expectReady(g, generation, configv1alpha1.ReasonApplied)
	g.Expect(cfg.Status.Effective.GuestbookImage).To(Equal("example.com/guestbook:live"))
	g.Expect(cfg.Status.Effective.LogLevel).To(Equal(configv1alpha1.LogLevel("info")), "the flag's value, in effect")
	g.Expect(cfg.Status.Effective.ConflictRecheckInterval).To(Equal("10m0s"), "the flag's value, in effect")
	g.Expect(cfg.Status.Effective.ChildAccess).To(Equal(configv1alpha1.ChildAccessRequester), "the safe default, shown")
	g.Expect(holder.Load().ChildAccess).To(Equal(configv1alpha1.ChildAccessRequester))

	// Delegation applies at once, in the settings the webhooks read, and shows.
	generation = setSpec(g, configv1alpha1.OperatorConfigurationSpec{ChildAccess: configv1alpha1.ChildAccessDelegated})
	cfg = expectReady(g, generation, configv1alpha1.ReasonApplied)
	g.Expect(cfg.Status.Effective.ChildAccess).To(Equal(configv1alpha1.ChildAccessDelegated))
	g.Expect(holder.Load().ChildAccess).To(Equal(configv1alpha1.ChildAccessDelegated))
}

// The log level changes at once in the process's logger.
func TestLogLevelAppliesLive(t *testing.T) {
	g := newG(t)
	resetAtEnd(t)
	var out bytes.Buffer
	var mu sync.Mutex
	log := ctrlzap.New(ctrlzap.Level(level), ctrlzap.WriteTo(lockedWriter{&mu, &out}))
	logged := func(emit func(logr.Logger)) func() string {
		return func() string {
			mu.Lock()
			out.Reset()
			mu.Unlock()
			emit(log)
			mu.Lock()
			defer mu.Unlock()
			return out.String()
		}
	}
	debugLine := logged(func(l logr.Logger) { l.V(1).Info("debug line") })
	infoLine := logged(func(l logr.Logger) { l.Info("info line") })
	verboseLine := logged(func(l logr.Logger) { l.V(3).Info("v3 line") })

	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)
	g.Expect(debugLine()).To(BeEmpty())

	setSpec(g, configv1alpha1.OperatorConfigurationSpec{LogLevel: configv1alpha1.LogLevelDebug})
	g.Eventually(debugLine).Should(ContainSubstring("debug line"))
	g.Expect(verboseLine()).To(BeEmpty())

	setSpec(g, configv1alpha1.OperatorConfigurationSpec{LogLevel: "3"})
	g.Eventually(verboseLine).Should(ContainSubstring("v3 line"))

	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{LogLevel: configv1alpha1.LogLevelError}),
		configv1alpha1.ReasonApplied)
	g.Expect(infoLine()).To(BeEmpty())
}

type lockedWriter struct {
	mu  *sync.Mutex
	out *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// The suite's flag says 10 minutes; the configuration's 1 s is what lets a
// Guestbook blocked by a foreign StatefulSet, and an Application blocked by
// a foreign Deployment, recover within the test.
func TestConflictRecheckIntervalApplies(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{ConflictRecheckInterval: "1s"}),
		configv1alpha1.ReasonApplied)
	g.Expect(holder.Load().ConflictRecheckInterval).To(Equal(time.Second))

	ns := testutil.Namespace(t, k8sClient)
	theirs := testutil.ForeignStatefulSet(ns, "gb-recheck")
	g.Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
	theirDeployment := foreignDeployment(ns, "app-recheck")
	g.Expect(k8sClient.Create(ctx, theirDeployment)).To(Succeed())
	gb := &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "gb-recheck"},
		Spec:       webappv1.GuestbookSpec{Size: 1, ConfigMapName: "recheck-conf", Namespace: ns},
	}
	g.Expect(k8sClient.Create(ctx, gb)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, gb) })
	app := &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-recheck"},
		Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}},
		}},
	}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &webappv1.Guestbook{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), got)).To(Succeed())
		ready := meta.FindStatusCondition(got.Status.Conditions, webappv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(webappv1.ReasonResourceConflict))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &sunappsv1.Application{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), got)).To(Succeed())
		ready := meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonResourceConflict))
		g.Expect(ready.ObservedGeneration).To(Equal(got.Generation))
	}).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, theirs)).To(Succeed())
	g.Expect(k8sClient.Delete(ctx, theirDeployment)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed())
		owner := &webappv1.Guestbook{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), owner)).To(Succeed())
		g.Expect(apply.IsControlledBy(got, owner.UID)).To(BeTrue())
	}, 10*time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(theirDeployment), got)).To(Succeed())
		owner := &sunappsv1.Application{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), owner)).To(Succeed())
		g.Expect(apply.IsControlledBy(got, owner.UID)).To(BeTrue())
	}, 10*time.Second).Should(Succeed())
}

// foreignDeployment is a Deployment someone else made: no owner, no
// operator label.
func foreignDeployment(namespace, name string) *appsv1.Deployment {
	labels := map[string]string{"app": "theirs"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/theirs:1"}}},
			},
		},
	}
}

// A field the operator cannot apply is refused in the status and by a
// Warning event, the value in effect kept; the others apply.
func TestRefusedFieldsKeepTheValueInEffect(t *testing.T) {
	g := newG(t)
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)
	before := len(restarts.all())

	generation := setSpec(g, configv1alpha1.OperatorConfigurationSpec{
		GuestbookImage:  "example.com/guestbook:refused-neighbour",
		WatchNamespaces: []string{"default", "no-such-namespace"},
		GuestbookResources: &configv1alpha1.GuestbookResources{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	})
	cfg := expectReady(g, generation, configv1alpha1.ReasonRefused)
	g.Expect(cfg.Status.Refused).To(ConsistOf(
		HaveField("Field", "spec.watchNamespaces"),
		HaveField("Field", "spec.guestbookResources"),
	))
	ready := meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionReady)
	g.Expect(ready.Message).To(ContainSubstring("no-such-namespace"))
	g.Expect(ready.Message).To(ContainSubstring("memory limit 64Mi is below its request 256Mi"))
	g.Expect(cfg.Status.Effective.WatchNamespaces).To(BeEmpty(), "every namespace, as before")
	g.Expect(cfg.Status.Effective.GuestbookResources.Requests.Memory().String()).To(Equal("32Mi"))
	g.Expect(cfg.Status.Effective.GuestbookImage).To(Equal("example.com/guestbook:refused-neighbour"))
	g.Expect(holder.Load().GuestbookImage).To(Equal("example.com/guestbook:refused-neighbour"))
	g.Expect(restarts.all()).To(HaveLen(before), "nothing to restart for")
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g)).To(ContainElement(configv1alpha1.ReasonRefused))
	}).Should(Succeed())
}

// A change of a field that applies at start is reported as RestartRequired
// and makes the controller ask for a restart.
func TestRestartRequiredIsReportedBeforeTheRestart(t *testing.T) {
	g := newG(t)
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)
	before := len(restarts.all())

	generation := setSpec(g, configv1alpha1.OperatorConfigurationSpec{
		Controllers: &configv1alpha1.ControllersSpec{Drink: new(false)},
	})
	cfg := expectReady(g, generation, configv1alpha1.ReasonRestartRequired)
	g.Expect(*cfg.Status.Effective.Controllers.Drink).To(BeTrue(), "in effect until the restart")
	g.Eventually(func() []string { return restarts.all()[before:] }).Should(
		ContainElement(ContainSubstring("spec.controllers")))
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g)).To(ContainElement(configv1alpha1.ReasonRestartRequired))
	}).Should(Succeed())
}

// A deleted configuration stops nothing: the settings in effect stay.
func TestDeletedConfigurationKeepsTheSettingsInEffect(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{GuestbookImage: "example.com/guestbook:kept"}),
		configv1alpha1.ReasonApplied)

	mark := suite.Reconciles.Mark()
	g.Expect(k8sClient.Delete(ctx, getConfig(g))).To(Succeed())
	suite.ExpectReconciled(g, mark, controllerName, ConfigurationKey)
	g.Expect(holder.Load().GuestbookImage).To(Equal("example.com/guestbook:kept"))
}

func eventReasons(g Gomega) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace("default"))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "OperatorConfiguration" {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
