// The chart's Roles (charts/skybridge/templates/*-rbac.yaml) as YAML for the tests' static-token
// users, so the operator and proxies run with least privilege, not as admin.

const CR_KINDS = 'providers, virtualkeys, routingrules, webhooks, mcpclients, cachepolicies, teams, customers';
const CR_STATUS = 'providers/status, virtualkeys/status, routingrules/status, webhooks/status, mcpclients/status, cachepolicies/status, teams/status, customers/status';

/** Reading the custom resources and writing their status and Events (Events need get: a new leader finds the series). */
const CR_RULES = `
  - apiGroups: [gateway.skybridge.dev]
    resources: [${CR_KINDS}]
    verbs: [get, list, watch]
  - apiGroups: [gateway.skybridge.dev]
    resources: [${CR_STATUS}]
    verbs: [get, patch, update]
  - apiGroups: [events.k8s.io]
    resources: [events]
    verbs: [get, create, patch]`;

const binding = (name: string, ns: string) => `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${name}, namespace: ${ns} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${name} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: ${name} }]`;

/**
 * The operator's Role in the configuration namespace (bound to user skybridge-operator).
 * `servedLeases`: it also lists and watches the proxies' served-report Leases.
 * `tenants`: namespaces whose custom resources and Secrets it reads too.
 */
export function operatorRbac(ns: string, opts: { servedLeases?: boolean; tenants?: readonly string[] } = {}): string {
  let yaml = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: skybridge-operator, namespace: ${ns} }
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch, create, patch, update, delete]
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch, create]
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [skybridge-secrets, skybridge-secrets-1, skybridge-secrets-2, skybridge-secrets-3]
    verbs: [patch, update, delete]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [${opts.servedLeases ? 'create, list, watch' : 'create'}]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [skybridge-operator]
    verbs: [get, update, patch]${CR_RULES}${binding('skybridge-operator', ns)}`;
  for (const tenant of opts.tenants ?? []) {
    yaml += `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: skybridge-operator, namespace: ${tenant} }
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]${CR_RULES}${binding('skybridge-operator', tenant)}`;
  }
  return yaml;
}

/** The proxies' Role (bound to user skybridge-proxy): the rendering, and their own served-report Leases. */
export function proxyRbac(ns: string): string {
  return `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: skybridge-proxy, namespace: ${ns} }
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch]
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [skybridge-secrets, skybridge-secrets-1, skybridge-secrets-2, skybridge-secrets-3]
    verbs: [get, list, watch]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update, delete]${binding('skybridge-proxy', ns)}`;
}

/**
 * The chart's ClusterRole for the conversion webhook (operator-rbac.yaml): get and patch on the
 * Skybridge CRDs by name, so the operator can point them at itself; bound to user skybridge-operator.
 */
export function operatorCrdRbac(crdNames: readonly string[]): string {
  return `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: skybridge-operator-crds }
rules:
  - apiGroups: [apiextensions.k8s.io]
    resources: [customresourcedefinitions]
    resourceNames: [${crdNames.join(', ')}]
    verbs: [get, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: skybridge-operator-crds }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: skybridge-operator-crds }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: skybridge-operator }]`;
}
