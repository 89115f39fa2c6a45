package apps

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// installGatewayAPI installs the Gateway API's HTTPRoute CRD, from the
// module the operator builds with, as a user would install the Gateway
// API into a cluster.
func installGatewayAPI(t *testing.T, g Gomega) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	g.Expect(err).NotTo(HaveOccurred())
	crd := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard",
		"gateway.networking.k8s.io_httproutes.yaml")
	_, err = envtest.InstallCRDs(suite.Config, envtest.CRDInstallOptions{Paths: []string{crd}})
	g.Expect(err).NotTo(HaveOccurred())
}

func routedApp(ns string) *sunappsv1.Application {
	app := minimalApp(ns, "routed")
	app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 8080}}
	app.Spec.Route = &sunappsv1.Route{
		ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}},
		Hostnames:  []gatewayv1.Hostname{"shop.example.com"},
		Path:       "/shop",
	}
	return app
}

// spec.route on a cluster without the Gateway API: the Application says
// so (RouteAPIMissing, kstatus Failed) while its Deployment and Service
// are made as ever; once the API's CRDs are installed, the route is made
// without a restart. What the Gateway says of it is mirrored
// (RouteAccepted), the URL follows, and removing the field deletes it.
func TestRouteWithoutThenWithTheGatewayAPI(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := routedApp(ns)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		getDeployment(g, app)
		getService(g, app)
		got := getApp(g, app)
		c := readyCond(g, app)
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonRouteAPIMissing))
		g.Expect(c.Message).To(ContainSubstring("gateway.networking.k8s.io/v1"))
		g.Expect(testutil.KStatus(g, got)).To(Equal(kstatus.FailedStatus))
		g.Expect(got.Status.URL).To(Equal("http://routed."+ns+".svc:8080"), "the Service's URL meanwhile")
	}).Should(Succeed())
	markDeploymentAvailable(g, app)

	installGatewayAPI(t, g)
	route := &gatewayv1.HTTPRoute{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), route)).To(Succeed())
		g.Expect(metav1.IsControlledBy(route, getApp(g, app))).To(BeTrue())
		g.Expect(route.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{"shop.example.com"}))
		g.Expect(route.Spec.Rules).To(HaveLen(1))
		g.Expect(*route.Spec.Rules[0].Matches[0].Path.Value).To(Equal("/shop"))
		backend := route.Spec.Rules[0].BackendRefs[0]
		g.Expect(string(backend.Name)).To(Equal("routed"))
		g.Expect(*backend.Port).To(Equal(gatewayv1.PortNumber(8080)))
		g.Expect(readyCond(g, app).Reason).To(Equal(sunappsv1.ReasonRoutePending))
	}).Should(Succeed(), "made within the recheck interval of the API's installation")

	// A Gateway controller accepts it.
	parentSays := func(status metav1.ConditionStatus, reason string) {
		g.Eventually(func(g Gomega) { gatewaySays(g, client.ObjectKeyFromObject(app), status, reason) }).Should(Succeed())
	}
	parentSays(metav1.ConditionTrue, "Accepted")
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, sunappsv1.ConditionRouteAccepted)).To(BeTrue())
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(got.Status.URL).To(Equal("http://shop.example.com/shop"))
	}).Should(Succeed())

	parentSays(metav1.ConditionFalse, "NotAllowedByListeners")
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		c := readyCond(g, app)
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonRouteNotAccepted))
		g.Expect(c.Message).To(ContainSubstring("NotAllowedByListeners"))
		g.Expect(testutil.KStatus(g, got)).To(Equal(kstatus.FailedStatus))
	}).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Route = nil
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &gatewayv1.HTTPRoute{}))).
			To(BeTrue())
		got := getApp(g, app)
		g.Expect(meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionRouteAccepted)).To(BeNil())
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(got.Status.URL).To(Equal("http://routed." + ns + ".svc:8080"))
	}).Should(Succeed())
}

// gatewaySays writes, as the Gateway controller of its parent "edge" would,
// the status of the route at key: Accepted and ResolvedRefs, with status
// and reason, of its present generation.
func gatewaySays(g Gomega, key client.ObjectKey, status metav1.ConditionStatus, reason string) {
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8sClient.Get(context.Background(), key, route)).To(Succeed())
	cond := func(t gatewayv1.RouteConditionType) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: "said by the test's Gateway",
			ObservedGeneration: route.Generation, LastTransitionTime: metav1.Now()}
	}
	route.Status.Parents = []gatewayv1.RouteParentStatus{{
		ParentRef: gatewayv1.ParentReference{Name: "edge"}, ControllerName: "example.com/gateway",
		Conditions: []metav1.Condition{cond(gatewayv1.RouteConditionAccepted), cond(gatewayv1.RouteConditionResolvedRefs)},
	}}
	g.Expect(k8sClient.Status().Update(context.Background(), route)).To(Succeed())
}

// TestRouteConformance runs the behaviour every kind shares
// (testutil.Conformance) against the Application's HTTPRoute, in a table
// of its own: the route is a child only once the Gateway API is
// installed, which TestRouteWithoutThenWithTheGatewayAPI does after it
// showed an Application without it. Go runs a package's tests in the
// order of their files' names and, within a file, of their source: this
// one comes after it, and installs the API again (unchanged) for a -run
// that leaves it out. Its parents are accepted by the test's Gateway,
// as their Deployments are made available.
func TestRouteConformance(t *testing.T) {
	installGatewayAPI(t, testutil.NewG(t))
	ns := testutil.Namespace(t, k8sClient)
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			app := routedApp(ns)
			app.Name = name
			return app
		},
		Children: []testutil.ConformanceChild{{
			Kind: "HTTPRoute",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return client.ObjectKeyFromObject(parent), &gatewayv1.HTTPRoute{}
			},
			Foreign: func(key client.ObjectKey) client.Object {
				return &gatewayv1.HTTPRoute{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Spec: gatewayv1.HTTPRouteSpec{
						CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "theirs"}}},
						Hostnames:       []gatewayv1.Hostname{"theirs.example.com"},
					},
				}
			},
			Change: func(parent client.Object) { parent.(*sunappsv1.Application).Spec.Route.Path = "/changed" },
			Changed: func(g Gomega, child client.Object) {
				g.Expect(servedPath(child.(*gatewayv1.HTTPRoute))).To(Equal("/changed"))
			},
			Tamper: func(child client.Object) {
				child.(*gatewayv1.HTTPRoute).Spec.Hostnames = []gatewayv1.Hostname{"tampered.example.com"}
			},
			Field: func(child client.Object) string { return fmt.Sprint(child.(*gatewayv1.HTTPRoute).Spec.Hostnames) },
			// What its Gateway says of it, and where it serves.
			Reported: func(g Gomega, parent client.Object) {
				app := parent.(*sunappsv1.Application)
				g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionRouteAccepted)).To(BeTrue())
				g.Expect(app.Status.URL).To(Equal("http://shop.example.com/shop"))
			},
		}},
		MakeReady: func(g Gomega, app client.Object) {
			conformanceDeploymentAvailable(g, app)
			route := &gatewayv1.HTTPRoute{}
			g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), route)).To(Succeed())
			if c, ok := routeAccepted(route); !ok || c.Status != metav1.ConditionTrue {
				gatewaySays(g, client.ObjectKeyFromObject(app), metav1.ConditionTrue, "Accepted")
			}
		},
		Restarted: func() { writes = suite.Writes },
	})
}

// A hostname that is not a DNS name, and a route without a Service port
// to send to, are refused by the API server naming the field.
func TestInvalidRoutesAreRefused(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	for _, tc := range []struct {
		name string
		edit func(*sunappsv1.Application)
		want string
	}{
		{name: "hostname", edit: func(a *sunappsv1.Application) {
			a.Spec.Route.Hostnames = []gatewayv1.Hostname{"Not A Host!"}
		}, want: "spec.route.hostnames[0]"},
		{name: "no port", edit: func(a *sunappsv1.Application) { a.Spec.Service.Ports = nil },
			want: "a route needs a Service port to send to"},
		{name: "no parent", edit: func(a *sunappsv1.Application) { a.Spec.Route.ParentRefs = nil },
			want: "spec.route.parentRefs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			app := routedApp(ns)
			tc.edit(app)
			err := k8sClient.Create(context.Background(), app)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
		})
	}
}
