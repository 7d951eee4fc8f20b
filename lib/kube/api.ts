/**
 * The part of @kubernetes/client-node lbdns uses. The package's index re-exports a client
 * for every API group of Kubernetes; naming what is used here lets the bundle keep only
 * that, which halves the code the cluster commands load, parse and keep in memory.
 * Only ever imported dynamically, through `kubeModule()`.
 */
export { CustomObjectsApi, KubeConfig, ListWatch, Observable, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
