package main

import (
	"bytes"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

const (
	// realKey is the real node's label and taint (hack/real-node.sh).
	realKey  = "sunstrider.cn/real-node"
	realNode = "sunstrider-node"
	imageV1  = "sunstrider.local/testapp:v1"
	imageV2  = "sunstrider.local/testapp:v2"
	appPort  = 8080
	// directLabel selects the direct variant's Pods; the Application's
	// selector is the operator's own default.
	directLabel = "app"
)

// variant is one way of running the same workload: an Application, or
// the Deployment and Service it stands for applied directly.
type variant int

const (
	application variant = iota
	direct
)

func (v variant) String() string {
	if v == application {
		return "Application"
	}
	return "Deployment + Service (direct)"
}

// prefix is what the variant's objects are named after.
func (v variant) prefix() string {
	if v == application {
		return "bench-app"
	}
	return "bench-direct"
}

// workload is what both variants run: replicas Pods of image, with a
// rolling update that never goes under replicas when rolling is set.
type workload struct {
	ns, name string
	image    string
	replicas int32
	rolling  bool
}

// podSpec is the Pod spec of both variants, as test/node builds it: the
// test image on the real node (its taint tolerated, its label selected),
// never pulled, ready when /readyz answers (probed every second), with
// the restricted Pod Security profile's securityContext.
func podSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector: map[string]string{realKey: "true"},
		Tolerations: []corev1.Toleration{{
			Key: realKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Containers: []corev1.Container{{
			Name: "app", Image: image, ImagePullPolicy: corev1.PullNever,
			Ports: []corev1.ContainerPort{{ContainerPort: appPort}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/readyz", Port: intstr.FromInt32(appPort)}},
				PeriodSeconds: 1,
			},
			SecurityContext: &corev1.SecurityContext{
				RunAsNonRoot:             new(true),
				AllowPrivilegeEscalation: new(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		}},
	}
}

// strategy is the rolling update of a spec change: one Pod over, none
// under the replicas.
func strategy(w workload) appsv1.DeploymentStrategy {
	if !w.rolling {
		return appsv1.DeploymentStrategy{}
	}
	return appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: new(intstr.FromInt32(0)), MaxSurge: new(intstr.FromInt32(1))},
	}
}

// servicePorts is the Service of both: port 80 to the app's 8080.
func servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(appPort)}}
}

// manifest is the YAML `kubectl apply -f` gets for w as variant v: an
// Application (its Deployment and ClusterIP Service are the operator's),
// or that Deployment and Service themselves. Both Services and both
// Deployments are named w.name.
func manifest(v variant, w workload) ([]byte, error) {
	meta := metav1.ObjectMeta{Namespace: w.ns, Name: w.name}
	if v == application {
		app := &sunappsv1.Application{
			TypeMeta:   metav1.TypeMeta{APIVersion: sunappsv1.GroupVersion.String(), Kind: "Application"},
			ObjectMeta: meta,
		}
		app.Spec.Deployment.Replicas = new(w.replicas)
		app.Spec.Deployment.Strategy = strategy(w)
		app.Spec.Deployment.Template.Spec = podSpec(w.image)
		app.Spec.Service.Type = corev1.ServiceTypeClusterIP
		app.Spec.Service.Ports = servicePorts()
		return yaml.Marshal(app)
	}
	labels := map[string]string{directLabel: w.name}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: new(w.replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: strategy(w),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       podSpec(w.image),
			},
		},
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: labels,
			Ports:    servicePorts(),
		},
	}
	var out bytes.Buffer
	for i, obj := range []any{deploy, svc} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}
