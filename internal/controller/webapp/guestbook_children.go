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

package webapp

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/machinery"
)

// DefaultGuestbookImage is the guestbook image used when the reconciler's
// Image is empty.
const DefaultGuestbookImage = "registry.k8s.io/guestbook:v3"

const (
	// LabelGuestbook names, on the Pods of a Guestbook, the Guestbook they
	// belong to. The Pod watch maps Pods to Guestbooks through it.
	LabelGuestbook = webappv1.LabelGuestbook
	// LabelRole holds the role of an instance: RoleActive or RoleStandby.
	// The operator sets it on the Pods; the Service selects RoleActive.
	LabelRole = "webapp.my.domain/role"
	// RoleActive is the role of the one instance that serves.
	RoleActive = "active"
	// RoleStandby is the role of the other instances.
	RoleStandby = "standby"
	// AnnotationConfigChecksum holds, on the Pod template, a checksum of the
	// ConfigMap data: a data change rolls the instances.
	AnnotationConfigChecksum = "webapp.my.domain/config-checksum"
	// EnvAlias is the environment variable passing spec.alias to instances.
	EnvAlias = "GUESTBOOK_ALIAS"

	appName         = "guestbook"
	containerName   = "guestbook"
	httpPortName    = "http"
	httpPort        = 3000
	servicePort     = 80
	configMountPath = "/etc/guestbook"
	configVolume    = "config"
	tmpVolume       = "tmp"
	// nonRootUID is the user the instances run as: the image may declare
	// root, which runAsNonRoot forbids.
	nonRootUID = 65532
)

// defaultConfig is the data of the ConfigMap the operator creates when
// spec.configMapName does not exist.
var defaultConfig = map[string]string{
	"guestbook.conf": "title=Guestbook\nmaxEntries=100\n",
}

// namespaceOf returns the namespace holding gb's workload.
func namespaceOf(gb *webappv1.Guestbook) string {
	if gb.Spec.Namespace == "" {
		return webappv1.DefaultNamespace
	}
	return gb.Spec.Namespace
}

// selectorLabels select the Pods of gb's StatefulSet.
func selectorLabels(gb *webappv1.Guestbook) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": appName,
		LabelGuestbook:           gb.Name,
	}
}

// childLabels are the labels of every object made for gb.
func childLabels(gb *webappv1.Guestbook) map[string]string {
	l := selectorLabels(gb)
	l["app.kubernetes.io/instance"] = gb.Name
	l[apply.ManagedByLabel] = apply.ManagedByValue
	return l
}

func controllerRef(gb *webappv1.Guestbook) []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(gb, webappv1.GroupVersion.WithKind("Guestbook"))}
}

// configChecksum returns a checksum of a ConfigMap's data (the one the
// cache keeps of a foreign ConfigMap: machinery.ConfigMapChecksum).
var configChecksum = machinery.DataChecksum

// desiredConfigMap returns the ConfigMap the operator creates, with default
// settings, when spec.configMapName does not exist.
func desiredConfigMap(gb *webappv1.Guestbook) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            gb.Spec.ConfigMapName,
			Namespace:       namespaceOf(gb),
			Labels:          childLabels(gb),
			OwnerReferences: controllerRef(gb),
		},
		Data: maps.Clone(defaultConfig),
	}
	return cm, apply.SetHash(cm)
}

// desiredStatefulSet returns the StatefulSet running gb's instances with the
// given image, its Pod template carrying the checksum of the configuration.
func desiredStatefulSet(gb *webappv1.Guestbook, image, checksum string) (*appsv1.StatefulSet, error) {
	if image == "" {
		image = DefaultGuestbookImage
	}
	var env []corev1.EnvVar
	if gb.Spec.Type != "" {
		env = []corev1.EnvVar{{Name: EnvAlias, Value: string(gb.Spec.Type)}}
	}
	podLabels := selectorLabels(gb)
	podLabels[apply.ManagedByLabel] = apply.ManagedByValue
	sts := &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            gb.Name,
			Namespace:       namespaceOf(gb),
			Labels:          childLabels(gb),
			OwnerReferences: controllerRef(gb),
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    new(gb.Spec.Size),
			ServiceName: gb.Name,
			Selector:    &metav1.LabelSelector{MatchLabels: selectorLabels(gb)},
			// Instances start and stop independently: a failing instance
			// must not hold the others back.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      podLabels,
					Annotations: map[string]string{AnnotationConfigChecksum: checksum},
				},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: new(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   new(true),
						RunAsUser:      new(int64(nonRootUID)),
						RunAsGroup:     new(int64(nonRootUID)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  containerName,
						Image: image,
						Ports: []corev1.ContainerPort{{Name: httpPortName, ContainerPort: httpPort, Protocol: corev1.ProtocolTCP}},
						Env:   env,
						ReadinessProbe: &corev1.Probe{
							ProbeHandler: corev1.ProbeHandler{
								HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString(httpPortName)},
							},
							PeriodSeconds:    5,
							FailureThreshold: 2,
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("10m"),
								corev1.ResourceMemory: resource.MustParse("32Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceMemory: resource.MustParse("64Mi"),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             new(true),
							AllowPrivilegeEscalation: new(false),
							ReadOnlyRootFilesystem:   new(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: configVolume, MountPath: configMountPath, ReadOnly: true},
							{Name: tmpVolume, MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: configVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: gb.Spec.ConfigMapName},
						}}},
						{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	return sts, apply.SetHash(sts)
}

// desiredService returns the Service of gb: it sends traffic to the active
// instance only.
func desiredService(gb *webappv1.Guestbook) (*corev1.Service, error) {
	selector := selectorLabels(gb)
	selector[LabelRole] = RoleActive
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            gb.Name,
			Namespace:       namespaceOf(gb),
			Labels:          childLabels(gb),
			OwnerReferences: controllerRef(gb),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name:       httpPortName,
				Port:       servicePort,
				TargetPort: intstr.FromString(httpPortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
	return svc, apply.SetHash(svc)
}
