/** The Nodes the benchmarks list: real-size workers, each with one InternalIP. */
import type { KubeObject } from '../test/support/kube-api-server.js';

export const nodeIp = (i: number): string => `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
export const IMAGES_PER_NODE = 40;

/**
 * A Node the size of a real OpenShift worker's (8.5 kB of JSON, most of it the image list the
 * kubelet reports), as in the measurements against a real kube-apiserver (issue 16): the
 * monitor only reads names and InternalIPs, but the API sends whole objects, and what it
 * keeps of them, and how fast it gets through them, is what the benchmarks are about.
 */
export function realisticNode(name: string, ip: string): KubeObject {
  const image = (i: number) => ({
    names: [`quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:${(i * 7919).toString(16).padStart(64, '0')}`],
    sizeBytes: 400_000_000 + i * 1000,
  });
  const condition = (type: string) => ({ type, status: type === 'Ready' ? 'True' : 'False', lastHeartbeatTime: '2026-11-20T10:00:00Z', lastTransitionTime: '2026-11-01T10:00:00Z', reason: `Kubelet${type}`, message: `kubelet reports ${type}` });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/worker': '', 'node.kubernetes.io/instance-type': 'm6i.xlarge', 'topology.kubernetes.io/region': 'us-east-1', 'topology.kubernetes.io/zone': 'us-east-1a' },
      annotations: { 'machine.openshift.io/machine': `openshift-machine-api/${name}`, 'machineconfiguration.openshift.io/currentConfig': 'rendered-worker-0123456789abcdef', 'machineconfiguration.openshift.io/desiredConfig': 'rendered-worker-0123456789abcdef', 'machineconfiguration.openshift.io/state': 'Done' },
    },
    spec: { providerID: `aws:///us-east-1a/i-${name}` },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }, { type: 'Hostname', address: `${name}.ec2.internal` }, { type: 'InternalDNS', address: `${name}.ec2.internal` }],
      allocatable: { cpu: '3500m', 'ephemeral-storage': '114396791822', memory: '15225892Ki', pods: '250' },
      capacity: { cpu: '4', 'ephemeral-storage': '125238252Ki', memory: '16374868Ki', pods: '250' },
      conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map(condition),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      images: Array.from({ length: IMAGES_PER_NODE }, (_, i) => image(i)),
      nodeInfo: { architecture: 'amd64', bootID: '01234567-89ab-cdef-0123-456789abcdef', containerRuntimeVersion: 'cri-o://1.31.0', kernelVersion: '5.14.0-427.el9.x86_64', kubeProxyVersion: 'v1.32.0', kubeletVersion: 'v1.32.0', machineID: 'ec2123456789abcdef0123456789abcd', operatingSystem: 'linux', osImage: 'Red Hat Enterprise Linux CoreOS 418', systemUUID: 'ec212345-6789-abcd-ef01-23456789abcd' },
    },
  };
}
