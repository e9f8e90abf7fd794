⍝ Benchmark Signal (thesis Fig 3.1; Tables 3.5/3.6: N = 50,000,000): the clamped,
⍝ scaled difference signal of ⍳N, summed.
⍝ bench:
diff ← {1↓⍵-¯1⌽⍵}
signal ← {¯50⌈50⌊50×(diff 0,⍵)÷0.01+⍵}
N ← 100000
+/ signal ⍳N
⍝ ==
⍝ output { 603.6908011414944f64 }
