package certs

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watches start watches of single objects by name.
type watches struct {
	cfg    *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
}

// watch calls onChange with the object each time obj (by its kind,
// namespace and name) is added or updated, and with nil when it is
// deleted, until ctx ends. It lists and watches with the field selector
// metadata.name=<name>, so that a Role or ClusterRole naming the object
// (resourceNames) is enough.
func (w watches) watch(ctx context.Context, obj client.Object, onChange func(obj any)) error {
	opts := cache.Options{
		Scheme: w.scheme,
		Mapper: w.mapper,
		ByObject: map[client.Object]cache.ByObject{
			obj: {Field: fields.OneTermEqualSelector("metadata.name", obj.GetName())},
		},
	}
	if ns := obj.GetNamespace(); ns != "" {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	c, err := cache.New(w.cfg, opts)
	if err != nil {
		return fmt.Errorf("watching %s: %w", obj.GetName(), err)
	}
	informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching %s: %w", obj.GetName(), err)
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onChange,
		UpdateFunc: func(_, obj any) { onChange(obj) },
		DeleteFunc: func(any) { onChange(nil) },
	}); err != nil {
		return fmt.Errorf("watching %s: %w", obj.GetName(), err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Watching failed", "name", obj.GetName())
		}
	}()
	return nil
}
