package apps

import (
	"maps"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	policyv1 "k8s.io/api/policy/v1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// childMeta is the metadata every child of app carries: app's name and
// namespace, app's labels plus the operator's own, and a controller owner
// reference.
func childMeta(app *sunappsv1.Application) metav1.ObjectMeta {
	labels := maps.Clone(app.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[apply.ManagedByLabel] = apply.ManagedByValue
	labels[ApplicationLabel] = app.Name
	return metav1.ObjectMeta{
		Name:      app.Name,
		Namespace: app.Namespace,
		Labels:    labels,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         sunappsv1.GroupVersion.String(),
			Kind:               "Application",
			Name:               app.Name,
			UID:                app.UID,
			Controller:         new(true),
			BlockOwnerDeletion: new(true),
		}},
	}
}

// desiredDeployment is the Deployment app asks for, with selector as its Pod
// selector. Pod template labels always include the selector's matchLabels.
func desiredDeployment(app *sunappsv1.Application, selector *metav1.LabelSelector) *appsv1.Deployment {
	spec := app.Spec.Deployment.DeepCopy()
	template := spec.Template
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	maps.Copy(template.Labels, selector.MatchLabels)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: childMeta(app),
		Spec: appsv1.DeploymentSpec{
			Replicas:                spec.Replicas,
			Selector:                selector.DeepCopy(),
			Template:                template,
			Strategy:                spec.Strategy,
			MinReadySeconds:         spec.MinReadySeconds,
			RevisionHistoryLimit:    spec.RevisionHistoryLimit,
			Paused:                  spec.Paused,
			ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		},
	}
}

// wantsService reports whether app asks for a Service: a Service without
// ports is invalid, so no ports means no Service.
func wantsService(app *sunappsv1.Application) bool {
	return len(app.Spec.Service.Ports) > 0
}

// desiredService is the Service app asks for. Its selector defaults to the
// Deployment's matchLabels; a port without targetPort targets its own port
// (the API server's default, spelled out so the live object matches).
func desiredService(app *sunappsv1.Application, selector *metav1.LabelSelector) *corev1.Service {
	spec := app.Spec.Service.ServiceSpec.DeepCopy()
	if len(spec.Selector) == 0 && selector != nil {
		spec.Selector = maps.Clone(selector.MatchLabels)
	}
	for i := range spec.Ports {
		if spec.Ports[i].TargetPort == (intstr.IntOrString{}) {
			spec.Ports[i].TargetPort = intstr.FromInt32(spec.Ports[i].Port)
		}
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: childMeta(app),
		Spec:       *spec,
	}
}

// desiredDisruptionBudget is the PodDisruptionBudget app asks for, on the
// Deployment's Pods (selector); nil when it asks for none.
func desiredDisruptionBudget(app *sunappsv1.Application, selector *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	budget := app.Spec.DisruptionBudget
	if budget == nil {
		return nil
	}
	budget = budget.DeepCopy()
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: childMeta(app),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       selector.DeepCopy(),
			MinAvailable:   budget.MinAvailable,
			MaxUnavailable: budget.MaxUnavailable,
		},
	}
}

// desiredAutoscaler is the HorizontalPodAutoscaler app asks for, aimed at
// app itself (its scale subresource); nil when it asks for none.
func desiredAutoscaler(app *sunappsv1.Application) *autoscalingv2.HorizontalPodAutoscaler {
	as := app.Spec.Autoscaling
	if as == nil {
		return nil
	}
	as = as.DeepCopy()
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: childMeta(app),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: sunappsv1.GroupVersion.String(), Kind: "Application", Name: app.Name,
			},
			MinReplicas: as.MinReplicas,
			MaxReplicas: as.MaxReplicas,
			Metrics:     as.Metrics,
			Behavior:    as.Behavior,
		},
	}
}
