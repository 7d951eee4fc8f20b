import type { RawConfig } from './config.js';

/** The built-in example cluster behind `--example`: IP literals only, so it needs no network. */
export const EXAMPLE_CONFIG: RawConfig = {
  domain: 'mycluster.example.com',
  role: 'control-plane',
  loadBalancers: {
    api: ['10.0.0.10', '10.0.0.11', 'fd00:10::10'],
    apiInt: ['10.0.0.20', '10.0.0.21', 'fd00:10::20'],
    ingress: ['10.0.1.30', '10.0.1.31', 'fd00:10::30'],
  },
  nodes: {
    'master-0': ['10.0.0.5', 'fd00:10::5'],
    'master-1': ['10.0.0.6', 'fd00:10::6'],
    'master-2': ['10.0.0.7', 'fd00:10::7'],
  },
  upstreams: ['10.0.0.2', '10.0.0.3'],
};
