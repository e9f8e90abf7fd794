⍝ Benchmark Primes (thesis §3.5.2; Table 3.1 says N = 100,000, its code ⍳10000):
⍝ an N×N outer-product residue, a first-axis reduction and a compress. The value is
⍝ the number of primes below N (168 for N = 1000; 1229 for N = 10,000).
⍝ bench:
N ← 1000
A ← 1↓⍳N
primes ← (1=+⌿0=A∘.|A)/A
≢primes
⍝ ==
⍝ output { 168i64 }
