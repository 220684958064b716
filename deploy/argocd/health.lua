-- Argo CD health of a Skybridge custom resource (gateway.skybridge.dev, every kind). The operator
-- sets Accepted and Ready with the generation they are for: anything older than the spec Argo CD
-- just synced is still Progressing, never a stale Healthy.
local hs = {}
local generation = obj.metadata and obj.metadata.generation
local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Skybridge operator to report status"
  return hs
end
if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Skybridge operator to observe generation " .. tostring(generation)
  return hs
end
local accepted = nil
local ready = nil
local connected = nil
for _, c in ipairs(status.conditions) do
  if c.type == "Accepted" then accepted = c end
  if c.type == "Ready" then ready = c end
  -- How a served resource is doing: an MCPClient's Connected, a Webhook's Delivering, a Provider's InferencePool.
  if c.type == "Connected" or c.type == "Delivering" or c.type == "InferencePool" then connected = c end
end
local function stale(c)
  return c == nil or (generation ~= nil and c.observedGeneration ~= nil and c.observedGeneration < generation)
end
if stale(accepted) or stale(ready) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Skybridge operator to set Accepted and Ready for generation " .. tostring(generation)
  return hs
end
local function describe(c)
  return (c.reason or "") .. ": " .. (c.message or "")
end
if accepted.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(accepted)
  return hs
end
-- Rendered and on its way to the proxies (not every live replica serves it yet): not a failure.
if ready.status == "False" and (ready.reason == "Propagating" or ready.reason == "NoReplicas") then
  hs.status = "Progressing"
  hs.message = describe(ready)
  return hs
end
if ready.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(ready)
  return hs
end
if accepted.status ~= "True" or ready.status ~= "True" then
  hs.status = "Progressing"
  hs.message = describe(ready)
  return hs
end
-- Accepted with parts left out (a provider or Secret key it references is missing): serving, but
-- not all of it.
if accepted.reason == "Degraded" then
  hs.status = "Degraded"
  hs.message = describe(accepted)
  return hs
end
-- An MCPClient is served only when its server answers: a client that cannot connect on some
-- replica is Degraded (its tools are missing there), one still connecting is Progressing. A Webhook
-- whose deliveries were given up lately is Degraded until a window passes without one.
if connected ~= nil and not stale(connected) then
  if connected.status == "False" then
    hs.status = "Degraded"
    hs.message = describe(connected)
    return hs
  end
  if connected.status ~= "True" then
    hs.status = "Progressing"
    hs.message = describe(connected)
    return hs
  end
end
hs.status = "Healthy"
hs.message = ready.message or "Rendered"
return hs
