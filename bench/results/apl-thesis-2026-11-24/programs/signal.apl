⍝ Benchmark Signal (thesis Fig 3.1; Tables 3.5/3.6: N = 50,000,000): the clamped,
⍝ scaled difference signal of ⍳N, summed.
⍝ bench:
diff ← {1↓⍵-¯1⌽⍵}
signal ← {¯50⌈50⌊50×(diff 0,⍵)÷0.01+⍵}
N ← 50000000
+/ signal ⍳N
