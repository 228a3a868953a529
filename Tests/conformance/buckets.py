#!/usr/bin/env python3
"""Percentage rollout buckets, as both delivery clients compute them (docs/delivery-semantics.md §2.3).

bucket = FNV-1a 64-bit over the UTF-8 bytes of "<campaignId>:<installationId>", modulo 100
(offset basis 0xcbf29ce484222325, prime 0x100000001b3, multiplication wrapping at 64 bits).
A campaign with `targeting.percentage` P shows on an installation when bucket < P.

Run without arguments to print the buckets the vectors rely on; or pass pairs to compute others:

    python3 Tests/conformance/buckets.py 21:0e9a4b6c-0000-4000-8000-000000000001
"""
import sys

OFFSET_BASIS = 0xCBF29CE484222325
PRIME = 0x100000001B3
MASK = 0xFFFFFFFFFFFFFFFF


def bucket(campaign_id, installation_id):
    """The installation's bucket (0-99) for the campaign."""
    hash_value = OFFSET_BASIS
    for byte in f"{campaign_id}:{installation_id}".encode("utf-8"):
        hash_value ^= byte
        hash_value = (hash_value * PRIME) & MASK
    return hash_value % 100


# (campaign id, installation id, the vector that relies on the bucket)
RELIED_ON = [
    (21, "0e9a4b6c-0000-4000-8000-000000000002", "targeting-percentage-inside.json"),   # 8: inside 30 %
    (21, "0e9a4b6c-0000-4000-8000-000000000001", "targeting-percentage-outside.json"),  # 41: outside 30 %, inside 60 %
]

if __name__ == "__main__":
    pairs = [arg.split(":", 1) for arg in sys.argv[1:]] or [(c, i) for c, i, _ in RELIED_ON]
    for campaign_id, installation_id in pairs:
        vectors = [v for c, i, v in RELIED_ON if str(c) == str(campaign_id) and i == installation_id]
        print(f"{campaign_id}:{installation_id} -> {bucket(campaign_id, installation_id)}", *vectors)
