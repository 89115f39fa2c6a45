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

// Command gateway is a minimal Gateway API implementation for the local
// cluster's tests, so that an Application's route carries real traffic
// there: no implementation's images can be pulled here, and Traefik v3,
// the one written in Go the module proxy lists, cannot be built from it
// (some of its dependencies are not served). It is not for production.
//
// It runs on the host beside the real node. It accepts the GatewayClasses
// of its controllerName and their Gateways, accepts the HTTPRoutes
// attached to them (ResolvedRefs False when a backend Service is missing),
// and serves HTTP on -listen: a request goes to the route whose hostname
// matches its Host (or that has none) with the longest path prefix, then
// to the first backend's Service, by its cluster IP (kube-proxy routes it).
// It looks at the cluster every -resync.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// backend is where one route's matching requests go.
type backend struct {
	hostnames []string
	path      string
	target    *url.URL
}

type gateway struct {
	c          client.Client
	controller gatewayv1.GatewayController
	mu         sync.RWMutex
	backends   []backend
}

func main() {
	listen := flag.String("listen", ":18080", "where to serve HTTP")
	controller := flag.String("controller", "sunstrider.local/test-gateway", "the controllerName of its GatewayClasses")
	resync := flag.Duration("resync", 500*time.Millisecond, "how often to look at the cluster")
	flag.Parse()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		log.Fatal(err)
	}
	if err := gatewayv1.Install(scheme); err != nil {
		log.Fatal(err)
	}
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	g := &gateway{c: c, controller: gatewayv1.GatewayController(*controller)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		for ctx.Err() == nil {
			if err := g.sync(ctx); err != nil {
				log.Printf("sync: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(*resync):
			}
		}
	}()
	// Bound before its address is told: with -listen 127.0.0.1:0 the
	// caller learns the port the kernel gave, which no one else can take
	// in between (stdout's first line: "serving on ADDRESS").
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("serving on %s\n", l.Addr())
	log.Printf("serving on %s for %s", l.Addr(), *controller)
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// ServeHTTP proxies r to the backend of the route that matches it.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	g.mu.RLock()
	var best *backend
	for i := range g.backends {
		b := &g.backends[i]
		if (len(b.hostnames) == 0 || slices.Contains(b.hostnames, host)) && strings.HasPrefix(r.URL.Path, b.path) &&
			(best == nil || len(b.path) > len(best.path)) {
			best = b
		}
	}
	g.mu.RUnlock()
	if best == nil {
		http.Error(w, "no route for "+host+r.URL.Path, http.StatusNotFound)
		return
	}
	proxy := httputil.NewSingleHostReverseProxy(best.target)
	// Straight to the Service: a proxy of the environment is not on the
	// way to a cluster IP.
	proxy.Transport = &http.Transport{Proxy: nil}
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		log.Printf("%s %s%s -> %s: %v", r.Method, r.Host, r.URL.Path, best.target, err)
		http.Error(w, "backend: "+err.Error(), http.StatusBadGateway)
	}
	proxy.ServeHTTP(w, r)
}

// sync accepts this controller's classes, Gateways and their routes, and
// rebuilds the backends.
func (g *gateway) sync(ctx context.Context) error {
	classes := &gatewayv1.GatewayClassList{}
	if err := g.c.List(ctx, classes); err != nil {
		return err
	}
	ours := map[string]bool{}
	for i := range classes.Items {
		gc := &classes.Items[i]
		if gc.Spec.ControllerName != g.controller {
			continue
		}
		ours[gc.Name] = true
		if setCondition(&gc.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted), metav1.ConditionTrue,
			"Accepted", gc.Generation) {
			if err := g.c.Status().Update(ctx, gc); err != nil {
				return err
			}
		}
	}
	gateways := &gatewayv1.GatewayList{}
	if err := g.c.List(ctx, gateways); err != nil {
		return err
	}
	served := map[string]bool{}
	for i := range gateways.Items {
		gw := &gateways.Items[i]
		if !ours[string(gw.Spec.GatewayClassName)] {
			continue
		}
		served[gw.Namespace+"/"+gw.Name] = true
		a := setCondition(&gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), metav1.ConditionTrue,
			"Accepted", gw.Generation)
		p := setCondition(&gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed), metav1.ConditionTrue,
			"Programmed", gw.Generation)
		if a || p {
			if err := g.c.Status().Update(ctx, gw); err != nil {
				return err
			}
		}
	}
	routes := &gatewayv1.HTTPRouteList{}
	if err := g.c.List(ctx, routes); err != nil {
		return err
	}
	var backends []backend
	for i := range routes.Items {
		rt := &routes.Items[i]
		b, err := g.route(ctx, rt, served)
		if err != nil {
			return err
		}
		backends = append(backends, b...)
	}
	g.mu.Lock()
	g.backends = backends
	g.mu.Unlock()
	return nil
}

// route accepts rt for each of its parents this gateway serves, and
// returns its backends.
func (g *gateway) route(ctx context.Context, rt *gatewayv1.HTTPRoute, served map[string]bool) ([]backend, error) {
	var parents []gatewayv1.RouteParentStatus
	var backends []backend
	for _, ref := range rt.Spec.ParentRefs {
		ns := rt.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		if !served[ns+"/"+string(ref.Name)] {
			continue
		}
		resolved, reason, found := metav1.ConditionTrue, "ResolvedRefs", []backend(nil)
		for _, rule := range rt.Spec.Rules {
			path := "/"
			if len(rule.Matches) > 0 && rule.Matches[0].Path != nil && rule.Matches[0].Path.Value != nil {
				path = *rule.Matches[0].Path.Value
			}
			if len(rule.BackendRefs) == 0 || rule.BackendRefs[0].Port == nil {
				continue
			}
			ref := rule.BackendRefs[0]
			svc := &corev1.Service{}
			if err := g.c.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: string(ref.Name)}, svc); err != nil {
				resolved, reason = metav1.ConditionFalse, string(gatewayv1.RouteReasonBackendNotFound)
				continue
			}
			hosts := make([]string, 0, len(rt.Spec.Hostnames))
			for _, h := range rt.Spec.Hostnames {
				hosts = append(hosts, string(h))
			}
			found = append(found, backend{hostnames: hosts, path: path,
				target: &url.URL{Scheme: "http", Host: fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, *ref.Port)}})
		}
		backends = append(backends, found...)
		status := gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: g.controller}
		setCondition(&status.Conditions, string(gatewayv1.RouteConditionAccepted), metav1.ConditionTrue, "Accepted",
			rt.Generation)
		setCondition(&status.Conditions, string(gatewayv1.RouteConditionResolvedRefs), resolved, reason, rt.Generation)
		if old := parentStatus(rt, ref); old != nil {
			for _, c := range old.Conditions {
				if o := meta.FindStatusCondition(status.Conditions, c.Type); o != nil && o.Status == c.Status &&
					o.Reason == c.Reason && o.ObservedGeneration == c.ObservedGeneration {
					o.LastTransitionTime = c.LastTransitionTime
				}
			}
		}
		parents = append(parents, status)
	}
	if len(parents) > 0 && !sameParents(rt.Status.Parents, parents) {
		rt.Status.Parents = parents
		if err := g.c.Status().Update(ctx, rt); err != nil {
			return nil, err
		}
	}
	return backends, nil
}

func parentStatus(rt *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) *gatewayv1.RouteParentStatus {
	for i := range rt.Status.Parents {
		if rt.Status.Parents[i].ParentRef.Name == ref.Name {
			return &rt.Status.Parents[i]
		}
	}
	return nil
}

func sameParents(a, b []gatewayv1.RouteParentStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for _, c := range b[i].Conditions {
			o := meta.FindStatusCondition(a[i].Conditions, c.Type)
			if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.ObservedGeneration != c.ObservedGeneration {
				return false
			}
		}
	}
	return true
}

// setCondition sets a condition and tells whether it changed.
func setCondition(conds *[]metav1.Condition, t string, status metav1.ConditionStatus, reason string, gen int64) bool {
	old := meta.FindStatusCondition(*conds, t)
	if old != nil && old.Status == status && old.Reason == reason && old.ObservedGeneration == gen {
		return false
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: t, Status: status, Reason: reason,
		Message: "said by the test gateway", ObservedGeneration: gen})
	return true
}
