// The genuine kube-controller-manager command (k8s.io/kubernetes/cmd/kube-controller-manager/app),
// same release as the test kube-apiserver, so tests see garbage collection of ownerReferences,
// foreground/orphan deletion and namespace cleanup as in a cluster. Flags are the upstream ones;
// test/helpers/kube.ts passes the kubeconfig and the controllers it wants.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
