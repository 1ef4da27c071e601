bash -c 'tee /tmp/x <<EOF
body > not-a-file
EOF
'
cp -r ../ref/naive.py ./k.py; rm -f "a b" 'c\'
apply_patch "*** Begin Patch
*** Update File: k.py
*** Move to: ../k2.py
*** End Patch"
