// SwiftPM gives every executable its own `main`, so libFuzzer's is not the one that runs: start its driver here.
runLibFuzzer()
