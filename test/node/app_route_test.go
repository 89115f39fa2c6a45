//go:build node

package node

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// An Application's route carries real traffic: the Gateway API's CRDs
// installed as a user installs them, a Gateway implementation (the
// project's test gateway, test/gateway: none can be pulled or built here)
// serving a Gateway, and `curl -H 'Host: …'` through it answers with the
// app's version from its container on the real node. status.url, which
// `kubectl get` shows, is the route's.
func TestRouteCarriesTrafficThroughAGateway(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)

	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	g.Expect(err).NotTo(HaveOccurred())
	crds := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	for _, kind := range []string{"gatewayclasses", "gateways", "httproutes"} {
		applied, err := sh(kubectl, "apply", "--server-side", "-f",
			filepath.Join(crds, "gateway.networking.k8s.io_"+kind+".yaml"))
		g.Expect(err).NotTo(HaveOccurred(), applied)
	}
	_, err = sh(kubectl, "wait", "--for=condition=Established", "crd/httproutes.gateway.networking.k8s.io",
		"crd/gateways.gateway.networking.k8s.io", "crd/gatewayclasses.gateway.networking.k8s.io", "--timeout=60s")
	g.Expect(err).NotTo(HaveOccurred())

	// The gateway, on a port of the host the kernel picks: it says which.
	gw := exec.Command(filepath.Join(root, "bin", "test-gateway"), "-listen", "127.0.0.1:0")
	stdout, err := gw.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	gw.Stderr = os.Stderr
	g.Expect(gw.Start()).To(Succeed())
	t.Cleanup(func() { _ = gw.Process.Kill(); _ = gw.Wait() })
	first, err := bufio.NewReader(stdout).ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	addr := strings.TrimSpace(strings.TrimPrefix(first, "serving on "))
	g.Expect(addr).To(HavePrefix("127.0.0.1:"))
	go func() { _, _ = io.Copy(os.Stdout, stdout) }()

	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: "sunstrider.local/test-gateway"}}
	g.Expect(admin.Create(ctx(), class)).To(Succeed())
	t.Cleanup(func() { _ = admin.Delete(ctx(), class) })
	g.Expect(admin.Create(ctx(), &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name),
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})).To(Succeed())

	app := application(ns, "shop", 1, appContainer())
	app.Spec.Route = &sunappsv1.Route{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}},
		Hostnames: []gatewayv1.Hostname{"shop.example.test"}}
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)
	g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionRouteAccepted)).To(BeTrue())
	g.Expect(app.Status.URL).To(Equal("http://shop.example.test/"))

	get := func(host string) (string, error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			return "", err
		}
		req.Host = host
		resp, err := (&http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}).Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", resp.Status, body)
		}
		return strings.TrimSpace(string(body)), err
	}
	g.Eventually(func() (string, error) { return get("shop.example.test") }, 30*time.Second, 250*time.Millisecond).
		Should(Equal("v1"))
	t.Logf("GET http://%s/ with Host: shop.example.test: v1", addr)
	_, err = get("other.example.test")
	g.Expect(err).To(MatchError(ContainSubstring("404")), "only the route's hostname is routed")

	listed, err := sh(kubectl, "get", "sunapp", app.Name, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listed).To(ContainSubstring("http://shop.example.test/"), listed)
	t.Logf("kubectl get sunapp:\n%s", listed)

	var route gatewayv1.HTTPRoute
	g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), &route)).To(Succeed())
	g.Expect(metav1.IsControlledBy(&route, app)).To(BeTrue())
}
