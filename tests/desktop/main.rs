//! Desktop app tests through WebDriver.
