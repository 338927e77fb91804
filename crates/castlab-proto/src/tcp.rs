//! TCP Reno and NewReno (issue 3). Work in progress.
