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

package settings

import (
	"context"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// Initial reads the initial OperatorConfiguration from a YAML file (a whole
// OperatorConfiguration, or nothing for an empty spec). Unknown fields are
// an error: a typo in Helm values must not be dropped silently.
func Initial(path string) (*configv1alpha1.OperatorConfiguration, error) {
	cfg := &configv1alpha1.OperatorConfiguration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the initial configuration: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, cfg); err != nil {
			return nil, fmt.Errorf("reading the initial configuration %s: %w", path, err)
		}
	}
	if cfg.Name != "" && cfg.Name != configv1alpha1.ConfigurationName {
		return nil, fmt.Errorf("the initial configuration must be named %q, not %q",
			configv1alpha1.ConfigurationName, cfg.Name)
	}
	gvk := configv1alpha1.GroupVersion.WithKind("OperatorConfiguration")
	if cfg.APIVersion != "" && (cfg.APIVersion != gvk.GroupVersion().String() || cfg.Kind != gvk.Kind) {
		return nil, fmt.Errorf("the initial configuration must be a %s %s, not %s %s",
			gvk.GroupVersion(), gvk.Kind, cfg.APIVersion, cfg.Kind)
	}
	return &configv1alpha1.OperatorConfiguration{
		ObjectMeta: metav1.ObjectMeta{
			Name:        configv1alpha1.ConfigurationName,
			Labels:      cfg.Labels,
			Annotations: cfg.Annotations,
		},
		Spec: cfg.Spec,
	}, nil
}

// CreateIfAbsent creates cfg unless an OperatorConfiguration of its name
// exists, which it leaves as it is. It reports whether it created it. Every
// replica's init container runs it, at every start: AlreadyExists is the
// common answer. It needs only create permission.
func CreateIfAbsent(ctx context.Context, c client.Client, cfg *configv1alpha1.OperatorConfiguration) (bool, error) {
	err := c.Create(ctx, cfg)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsAlreadyExists(err):
		return false, nil
	}
	return false, fmt.Errorf("creating OperatorConfiguration %s: %w", cfg.Name, err)
}
