-- wrk script for bench/installations.py: each request registers a new installation of its own (an iOS
-- device with an FCM token of TOKEN_LENGTH characters), its id made of RUN, the wrk thread and a counter,
-- so no two requests register the same installation or token. KEY is the app's public key.
local counter = 0
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

local alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
local token_length = tonumber(os.getenv("TOKEN_LENGTH") or "1024")
local headers = {["Authorization"] = "Bearer " .. (os.getenv("KEY") or ""), ["Content-Type"] = "application/json"}

-- A token of `length` characters from the provider's alphabet, different for every seed.
local function token(seed, length)
  local characters = {}
  local x = seed
  for index = 1, length do
    x = (x * 1103515245 + 12345) % 2147483648
    local pick = (x % #alphabet) + 1
    characters[index] = alphabet:sub(pick, pick)
  end
  return table.concat(characters)
end

function request()
  counter = counter + 1
  local id = string.format("%s-%d-%d", os.getenv("RUN") or "run", thread_number, counter)
  local body = '{"platform":"ios","appVersion":"12.4.1","language":"de-DE","country":"DE","timeZone":"Europe/Berlin",'
    .. '"notificationsAllowed":true,"pushProvider":"fcm","pushToken":"' .. id .. ":"
    .. token(thread_number * 1000003 + counter, token_length - #id - 1) .. '"}'
  return wrk.format("PUT", "/api/v1/installations/" .. id, headers, body)
end
