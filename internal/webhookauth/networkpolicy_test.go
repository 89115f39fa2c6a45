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

package webhookauth_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"sunstrider.cn/operator/internal/testutil"
)

// install is what one way of installing renders: the manager's Deployment,
// the Services in front of it and the NetworkPolicies selecting its Pods.
type install struct {
	deployment appsv1.Deployment
	services   []corev1.Service
	policies   []networkingv1.NetworkPolicy
}

// render runs name (kustomize or helm) with args in the repository root and
// reads what it renders: the policies strictly, as the API server would
// refuse a field their type lacks. A failed render is returned as an error
// holding its output.
func render(t *testing.T, env, name string, args ...string) (install, error) {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(testutil.Tool(t, root, env, name), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return install{}, errors.New(err.Error() + ": " + stderr.String())
	}
	var in install
	reader := utilyaml.NewYAMLReader(bufio.NewReader(&stdout))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			if err := yaml.Unmarshal(doc, &in.deployment); err != nil {
				t.Fatal(err)
			}
		case "Service":
			var s corev1.Service
			if err := yaml.Unmarshal(doc, &s); err != nil {
				t.Fatal(err)
			}
			in.services = append(in.services, s)
		case "NetworkPolicy":
			var p networkingv1.NetworkPolicy
			if err := yaml.UnmarshalStrict(doc, &p); err != nil {
				t.Fatalf("%v in\n%s", err, doc)
			}
			in.policies = append(in.policies, p)
		}
	}
	return in, nil
}

// helmTemplate renders dist/chart with the values given (--set-json).
func helmTemplate(t *testing.T, values ...string) (install, error) {
	t.Helper()
	args := make([]string, 0, 7+2*len(values))
	args = append(args, "template", "sunstrider-operator", "dist/chart", "--namespace", "ns", "--kube-version", "1.31.0")
	for _, v := range values {
		args = append(args, "--set-json", v)
	}
	return render(t, "HELM", "helm", args...)
}

// admitted returns, by port, the sources the policies that select the
// manager's Pods admit there: nil for any source.
func admitted(g Gomega, in install) map[int32][]networkingv1.NetworkPolicyPeer {
	podLabels := labels.Set(in.deployment.Spec.Template.Labels)
	g.Expect(podLabels).NotTo(BeEmpty(), "the manager's Deployment is rendered")
	out := map[int32][]networkingv1.NetworkPolicyPeer{}
	for _, p := range in.policies {
		selector := labels.SelectorFromSet(p.Spec.PodSelector.MatchLabels)
		g.Expect(p.Spec.PodSelector.MatchExpressions).To(BeEmpty(), p.Name)
		g.Expect(selector.Matches(podLabels)).To(BeTrue(), "%s selects the manager's Pods", p.Name)
		g.Expect(p.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}), p.Name)
		for _, rule := range p.Spec.Ingress {
			g.Expect(rule.Ports).NotTo(BeEmpty(), "%s: a rule for every port", p.Name)
			for _, port := range rule.Ports {
				g.Expect(port.Port).NotTo(BeNil(), p.Name)
				g.Expect(port.Port.Type).To(Equal(intstr.Int), "%s: ports by number", p.Name)
				g.Expect(port.Protocol).To(HaveValue(Equal(corev1.ProtocolTCP)), p.Name)
				out[port.Port.IntVal] = rule.From
			}
		}
	}
	return out
}

// served returns the container ports the Services in front of the manager
// send traffic to.
func served(g Gomega, in install) []int32 {
	podLabels := labels.Set(in.deployment.Spec.Template.Labels)
	named := map[string]int32{}
	for _, c := range in.deployment.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			named[p.Name] = p.ContainerPort
		}
	}
	var ports []int32
	for _, s := range in.services {
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			continue
		}
		for _, p := range s.Spec.Ports {
			port := p.TargetPort.IntVal
			if p.TargetPort.Type == intstr.String {
				var ok bool
				port, ok = named[p.TargetPort.StrVal]
				g.Expect(ok).To(BeTrue(), "Service %s targets the manager's port %s", s.Name, p.TargetPort.StrVal)
			}
			ports = append(ports, port)
		}
	}
	return ports
}

// TestNetworkPoliciesAdmitWhatTheServicesServe: kustomize's config/default
// and the chart ship NetworkPolicies by default; they select the manager's
// Pods and admit exactly the ports the Services in front of it serve (the
// webhooks and metrics: a policy that missed one would break admission or
// scraping wherever the CNI plugin enforces it), from any source unless the
// sources are given.
func TestNetworkPoliciesAdmitWhatTheServicesServe(t *testing.T) {
	anywhere := []networkingv1.NetworkPolicyPeer(nil)
	apiServer := []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/24"}}}
	prometheus := []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}}
	for _, tc := range []struct {
		name   string
		render func(t *testing.T) (install, error)
		want   map[int32][]networkingv1.NetworkPolicyPeer
	}{
		{"kustomize", func(t *testing.T) (install, error) {
			return render(t, "KUSTOMIZE", "kustomize", "build", "config/default")
		}, map[int32][]networkingv1.NetworkPolicyPeer{9443: anywhere, 8443: anywhere}},
		{"chart", func(t *testing.T) (install, error) { return helmTemplate(t) },
			map[int32][]networkingv1.NetworkPolicyPeer{9443: anywhere, 8443: anywhere}},
		{"chart with sources", func(t *testing.T) (install, error) {
			return helmTemplate(t, `networkPolicy.webhook.from=[{"ipBlock":{"cidr":"10.0.0.0/24"}}]`,
				`networkPolicy.metrics.from=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}]`)
		}, map[int32][]networkingv1.NetworkPolicyPeer{9443: apiServer, 8443: prometheus}},
		{"chart with another webhook port", func(t *testing.T) (install, error) {
			return helmTemplate(t, `webhook.port=10443`)
		}, map[int32][]networkingv1.NetworkPolicyPeer{10443: anywhere, 8443: anywhere}},
		{"chart without metrics", func(t *testing.T) (install, error) {
			return helmTemplate(t, `metrics.enabled=false`)
		}, map[int32][]networkingv1.NetworkPolicyPeer{9443: anywhere}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in, err := tc.render(t)
			g.Expect(err).NotTo(HaveOccurred())
			got := admitted(g, in)
			g.Expect(got).To(Equal(tc.want))
			ports := make([]int32, 0, len(got))
			for port := range got {
				ports = append(ports, port)
			}
			g.Expect(served(g, in)).To(ConsistOf(ports), "the ports admitted are those the Services serve")
		})
	}
}

// TestChartNetworkPolicyValues: the chart renders no policy when told not
// to, and refuses a source that is not a NetworkPolicyPeer, naming it.
func TestChartNetworkPolicyValues(t *testing.T) {
	g := NewWithT(t)
	in, err := helmTemplate(t, `networkPolicy.enabled=false`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.policies).To(BeEmpty())
	_, err = helmTemplate(t, `networkPolicy.webhook.from=[{"ipblock":{"cidr":"10.0.0.0/24"}}]`)
	g.Expect(err).To(MatchError(ContainSubstring("ipblock")))
}
