⍝ T20: cutting a plane out of a cube: cube[;4;] is index(2,4,cube).
cube ← 10 20 30⍴⍳6000
plane ← cube[;4;]
⎕ ← ⍴plane
plane[1;1] + plane[10;30]
⍝ ==
⍝ output { 5611i64 }
