⍝ T16: the signal of ⍳100 (apltail's tests/signal.out.ok: 258.557340366).
diff ← {1↓⍵-¯1⌽⍵}
signal ← {¯50⌈50⌊50×(diff 0,⍵)÷0.01+⍵}
+/ signal ⍳100
⍝ ==
⍝ output { 258.5573403661738f64 }
