package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// Both variants run the same Pod spec, Deployment strategy and Service
// ports: only how they are applied differs.
func TestManifestsRunTheSameWorkload(t *testing.T) {
	w := workload{ns: "bench-real", name: "x", image: imageV2, replicas: 2, rolling: true}
	appYAML, err := manifest(application, w)
	if err != nil {
		t.Fatal(err)
	}
	var app sunappsv1.Application
	if err := yaml.UnmarshalStrict(appYAML, &app); err != nil {
		t.Fatalf("%v:\n%s", err, appYAML)
	}
	dirYAML, err := manifest(direct, w)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(dirYAML, []byte("---\n"))
	if len(docs) != 2 {
		t.Fatalf("the direct manifest has %d documents, want 2:\n%s", len(docs), dirYAML)
	}
	var deploy appsv1.Deployment
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(docs[0], &deploy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &svc); err != nil {
		t.Fatal(err)
	}
	if app.Kind != "Application" || app.APIVersion != "apps.sunstrider.cn/v1" || deploy.Kind != "Deployment" ||
		svc.Kind != "Service" {
		t.Errorf("kinds: %s %s, %s, %s", app.APIVersion, app.Kind, deploy.Kind, svc.Kind)
	}
	for _, m := range []string{app.Namespace + "/" + app.Name, deploy.Namespace + "/" + deploy.Name,
		svc.Namespace + "/" + svc.Name} {
		if m != "bench-real/x" {
			t.Errorf("object %s, want bench-real/x", m)
		}
	}
	if !reflect.DeepEqual(app.Spec.Deployment.Template.Spec, deploy.Spec.Template.Spec) {
		t.Errorf("Pod specs differ:\n%s\n%s", appYAML, dirYAML)
	}
	if !reflect.DeepEqual(app.Spec.Deployment.Strategy, deploy.Spec.Strategy) ||
		*app.Spec.Deployment.Replicas != 2 || *deploy.Spec.Replicas != 2 {
		t.Errorf("strategies or replicas differ:\n%s\n%s", appYAML, dirYAML)
	}
	if !reflect.DeepEqual(app.Spec.Service.Ports, svc.Spec.Ports) || svc.Spec.Type != corev1.ServiceTypeClusterIP ||
		app.Spec.Service.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Services differ:\n%s\n%s", appYAML, dirYAML)
	}
	if !reflect.DeepEqual(svc.Spec.Selector, deploy.Spec.Template.Labels) ||
		!reflect.DeepEqual(deploy.Spec.Selector.MatchLabels, deploy.Spec.Template.Labels) {
		t.Errorf("the direct Service or Deployment does not select its Pods:\n%s", dirYAML)
	}
	ru := deploy.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxSurge.IntValue() != 1 || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy %+v, want maxSurge 1, maxUnavailable 0", deploy.Spec.Strategy)
	}
}

// The Pods land on the real node, run the image given without pulling it,
// are probed on /readyz every second, and meet the restricted profile.
func TestPodSpecRunsOnTheRealNode(t *testing.T) {
	spec := podSpec(imageV1)
	if spec.NodeSelector[realKey] != "true" || len(spec.Tolerations) != 1 ||
		spec.Tolerations[0].Key != realKey || spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("not placed on the real node: %+v %+v", spec.NodeSelector, spec.Tolerations)
	}
	c := spec.Containers[0]
	if c.Image != imageV1 || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("image %s, pull policy %s", c.Image, c.ImagePullPolicy)
	}
	p := c.ReadinessProbe
	if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.IntValue() != appPort ||
		p.PeriodSeconds != 1 {
		t.Errorf("readiness probe %+v", p)
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("securityContext %+v", sc)
	}
	// Without a rolling spec change, the strategy is the API's default.
	w := workload{ns: "n", name: "x", image: imageV1, replicas: 1}
	out, err := manifest(direct, w)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "rollingUpdate") {
		t.Errorf("a strategy without rolling set:\n%s", out)
	}
}
