#pragma once

#include <QWidget>

class QDateTime;
class QLabel;
class QLineEdit;

namespace cloop::dashboard {

// The one-time command an enrollment answered, as shown once: the line that
// starts the daemon with its bundle, the line that installs it as the
// machine's service, each with Copy, and until when the bundle works.
class EnrollmentCommandView final : public QWidget
{
    Q_OBJECT

public:
    // `where`: the machine the command is for ("the machine the device is
    // attached to").
    EnrollmentCommandView(const QString &where, QWidget *parent = nullptr);

    // `replaced`: an earlier command for the same daemon stopped working.
    void present(const QString &command, const QString &installCommand, const QDateTime &validUntil,
        bool replaced);

    QLineEdit *commandEdit() const { return m_command; }
    QLineEdit *installCommandEdit() const { return m_installCommand; }
    QLabel *validityLabel() const { return m_validity; }

private:
    QLineEdit *m_command;
    QLineEdit *m_installCommand;
    QLabel *m_validity;
};

} // namespace cloop::dashboard
